export type {
  CodeModeChildren,
  CodeModeContract,
  CodeModeLimits,
  CodeModeOutput,
  CodeModeTool,
  CodeModeToolOptions,
} from "./code-mode-tool.js";
export { codeModeTool } from "./code-mode-tool.js";
export type { ProgramFunction, ProgramLimits, ProgramOutcome } from "./run-program.js";
export { runProgram } from "./run-program.js";
