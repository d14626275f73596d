import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every TypeScript code block of the READMEs and `docs/` compiles.
 *
 * Each fenced block whose info string starts with `ts`, `typescript` or `tsx` becomes its own
 * module: a virtual file (nothing is written to disk) in a folder per Markdown file under
 * `<repo>/.doc-blocks/`, so imports resolve through the repo's `node_modules`. A block whose first
 * line is a comment naming a file (`// agent.ts`) is that file, and the other blocks of the same
 * Markdown file can import it (`import { agent } from "./agent"`).
 *
 * The blocks are type-checked with the options of the root `tsconfig.json`: `tsconfig.base.json`
 * plus the `paths` that map `@pai/*` to the workspace sources, as `vitest.config.ts` aliases them.
 * Only the blocks' own diagnostics are reported, each at `file:line` of the Markdown source.
 *
 * All blocks share one program, except the blocks of a Markdown file that augments a module
 * (`declare module "@pai/core" { interface Register { ... } }`): such a file registers app-wide
 * types, so its blocks get a program of their own where the registration applies to all of that
 * file's blocks and to nothing else.
 *
 * Opt-out: the info string `ts nocheck`, only for a block that deliberately shows a compile
 * error (the prose around it must say so).
 */

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SKIPPED_DIRECTORIES = new Set(["node_modules", "dist", "test-artifacts"]);
const CHECKED_LANGUAGES = new Map([
  ["ts", ".ts"],
  ["typescript", ".ts"],
  ["tsx", ".tsx"],
]);

type DocBlock = {
  /** Markdown file, relative to the repo root, with `/` separators. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  extension: ".ts" | ".tsx";
  code: string;
  nocheck: boolean;
  /** The file name the block gives itself on its first line (`// agent.ts`), if any. */
  name: string | null;
};

const toPosix = (path: string) => path.split(sep).join("/");

/** Every `README.md` outside node_modules/dist/dot-folders, and every Markdown file under `docs/`. */
function markdownFiles(directory = root, inDocs = false): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (entry.name.startsWith(".") || SKIPPED_DIRECTORIES.has(entry.name)) continue;
      const docs = inDocs || (directory === root && entry.name === "docs");
      found.push(...markdownFiles(path, docs));
    } else if (entry.isFile() && (entry.name === "README.md" || (inDocs && entry.name.endsWith(".md")))) {
      found.push(toPosix(relative(root, path)));
    }
  }
  return found.sort();
}

/** Fenced code blocks (``` or ~~~, any indentation) of one Markdown file. */
function extractBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    if (fence[0] === "`" && info.includes("`")) continue; // inline code, not a fence
    const words = info.trim().split(/\s+/);
    const closing = new RegExp(`^\\s*${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end])) {
      const line = lines[end];
      const strip = Math.min(indent.length, line.length - line.trimStart().length);
      body.push(line.slice(strip));
      end++;
    }
    const extension = CHECKED_LANGUAGES.get(words[0].toLowerCase());
    if (extension) {
      blocks.push({
        file,
        line: index + 1,
        extension: extension as DocBlock["extension"],
        code: body.join("\n"),
        nocheck: words.slice(1).includes("nocheck"),
        name: /^\/\/\s*((?:[\w-]+\/)*[\w.-]+\.tsx?)\s*$/.exec(body[0] ?? "")?.[1] ?? null,
      });
    }
    index = end;
  }
  return blocks;
}

/** The root tsconfig's options (base options plus the `@pai/*` paths to the sources). */
function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
      },
    },
  );
  if (!parsed) throw new Error("tsconfig.json could not be read");
  return { ...parsed.options, noEmit: true };
}

/** Virtual path of a block: `.doc-blocks/<markdown path>/<its own name, or L<line>.ts(x)>`. */
const blockPath = (block: DocBlock) =>
  toPosix(join(root, ".doc-blocks", block.file, block.name ?? `L${block.line}${block.extension}`));

const AUGMENTS = /^\s*declare\s+(module\s+["']|global\b)/m;

function checkBlocks(blocks: DocBlock[]): string[] {
  const options = compilerOptions();
  const virtualFiles = new Map<string, { block: DocBlock; text: string }>();
  const virtualDirectories = new Set<string>();
  const errors: string[] = [];
  for (const block of blocks) {
    const path = blockPath(block);
    const clash = virtualFiles.get(path);
    if (clash) {
      errors.push(`${block.file}:${block.line}: the block at line ${clash.block.line} is also ${block.name}`);
    }
    // `export {}` makes every block a module even without imports, so blocks never share globals.
    virtualFiles.set(path, { block, text: `${block.code}\nexport {};\n` });
    for (let directory = dirname(path); directory.length > root.length; directory = dirname(directory)) {
      virtualDirectories.add(directory);
    }
  }

  const host = ts.createCompilerHost(options, true);
  const realGetSourceFile = host.getSourceFile.bind(host);
  const parsed = new Map<string, ts.SourceFile | undefined>(); // real files, shared by the programs
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const virtual = virtualFiles.get(fileName);
    if (virtual) return ts.createSourceFile(fileName, virtual.text, languageVersion, true);
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    if (!parsed.has(key))
      parsed.set(key, realGetSourceFile(fileName, languageVersion, onError, shouldCreate));
    return parsed.get(key);
  };
  const realFileExists = host.fileExists.bind(host);
  const realReadFile = host.readFile.bind(host);
  const realDirectoryExists = host.directoryExists?.bind(host);
  host.fileExists = (fileName) => virtualFiles.has(fileName) || realFileExists(fileName);
  host.readFile = (fileName) => virtualFiles.get(fileName)?.text ?? realReadFile(fileName);
  host.directoryExists = (directory) =>
    virtualDirectories.has(directory) ||
    (realDirectoryExists?.(directory) ?? ts.sys.directoryExists(directory));

  // One program for all blocks, plus one per Markdown file that registers app-wide types.
  const groups = new Map<string, string[]>();
  for (const [path, { block }] of virtualFiles) {
    const augmenting = blocks.some((other) => other.file === block.file && AUGMENTS.test(other.code));
    const group = augmenting ? block.file : "";
    groups.set(group, [...(groups.get(group) ?? []), path]);
  }

  for (const rootNames of groups.values()) {
    const program = ts.createProgram({ rootNames, options, host });
    for (const diagnostic of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) {
      errors.push(
        `compiler: TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ")}`,
      );
    }
    for (const path of rootNames) {
      const { block } = virtualFiles.get(path)!;
      if (block.nocheck) continue;
      const sourceFile = program.getSourceFile(path)!;
      const diagnostics = [
        ...program.getSyntacticDiagnostics(sourceFile),
        ...program.getSemanticDiagnostics(sourceFile),
      ];
      for (const diagnostic of diagnostics) {
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ");
        const line =
          diagnostic.file && diagnostic.start !== undefined
            ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1
            : 0;
        errors.push(
          `${block.file}:${block.line + line} (block at line ${block.line}): TS${diagnostic.code}: ${message}`,
        );
      }
    }
  }
  return errors;
}

describe("TypeScript code blocks in READMEs and docs/", () => {
  const blocks = markdownFiles().flatMap((file) =>
    extractBlocks(file, readFileSync(join(root, file), "utf8")),
  );

  it("finds the blocks", () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(new Set(blocks.map((block) => block.file))).toContain("README.md");
  });

  it("opts out only with `ts nocheck`", () => {
    expect(extractBlocks("x.md", "```ts nocheck\nconst a: number = 'no';\n```\n")[0]?.nocheck).toBe(true);
    expect(extractBlocks("x.md", "```sh\nnpm test\n```\n")).toEqual([]);
  });

  // A server's project is typically `module: NodeNext`, where a relative import without its
  // extension does not resolve; the doc blocks compile under Bundler resolution, so this is
  // checked here. Browser code (tsx, or `.ts` blocks importing only client packages) is bundled
  // and keeps bundler-style specifiers.
  it("server-side blocks import relative files with their .js extension", () => {
    const serverPackage =
      /from "(@pai\/core(\/testing)?|@trpc\/server[^"]*|@pai\/storage-[^"]+|@pai\/transport-trpc)"/;
    const offenders = blocks
      .filter((block) => block.extension === ".ts" && serverPackage.test(block.code))
      .flatMap((block) =>
        [...block.code.matchAll(/from "(\.{1,2}\/[^"]+)"/g)]
          .map((match) => match[1])
          .filter((specifier) => !/\.(js|json)$/.test(specifier))
          .map((specifier) => `${block.file}:${block.line} imports "${specifier}"`),
      );
    expect(offenders).toEqual([]);
  });

  it("every block compiles", { timeout: 120_000 }, () => {
    const errors = checkBlocks(blocks);
    if (errors.length > 0) {
      expect.fail(`${errors.length} compile errors in documentation code blocks:\n${errors.join("\n")}`);
    }
  });
});
