import { defineAgent } from "@pai/core";
import type { PlaygroundIdentity } from "./identity.js";
import {
  adminStats,
  deployService,
  draftReport,
  exportCsv,
  getSelectedText,
  requestApproval,
  runCode,
  runShell,
} from "./tools.js";

/** The playground's one agent. The web UI types its bindings from `typeof agent`. */
export const agent = defineAgent({
  name: "main",
  runtimeContext: ({ identity }) => ({ user: identity as PlaygroundIdentity }),
  instructions: [
    "You are the PAI playground assistant. Use the tools to demonstrate durable agent features:",
    "requestApproval before anything risky, draftReport for reports, deployService for deployments,",
    "getSelectedText to read the user's selection, getBrowserInfo (when offered) for the browser's",
    "locale and time, exportCsv for CSV files, adminStats for server statistics, runShell for shell",
    "commands in the thread's sandbox and runCode to write one JavaScript program that calls orderTotal",
    "or runShell many times. Keep answers short.",
  ].join(" "),
  tools: {
    requestApproval,
    draftReport,
    deployService,
    getSelectedText,
    exportCsv,
    runShell,
    runCode,
    adminStats: {
      tool: adminStats,
      // Coarse availability from trusted identity; the model of a non-admin never sees the tool.
      enabled: ({ runtimeContext }) => runtimeContext.user.role === "admin",
    },
  },
  maxSteps: 8,
});

export type PlaygroundAgent = typeof agent;
