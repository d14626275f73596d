import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import parse from "@changesets/parse";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = join(root, ".changeset");
const files = readdirSync(dir).filter((file) => file.endsWith(".md") && file !== "README.md");

/** Names of the workspace packages a changeset may release. */
function workspaceNames(): Set<string> {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
  const names = new Set<string>();
  for (const pattern of manifest.workspaces) {
    const dirs = pattern.endsWith("/*")
      ? readdirSync(join(root, pattern.slice(0, -2))).map((name) => join(pattern.slice(0, -2), name))
      : [pattern];
    for (const path of dirs) {
      try {
        names.add(
          (JSON.parse(readFileSync(join(root, path, "package.json"), "utf8")) as { name: string }).name,
        );
      } catch {
        // not a package directory
      }
    }
  }
  return names;
}

// The formatter once turned a one-package front matter into a heading (a line followed by
// `---` is a setext heading), which `changeset version` then refuses. Every file must parse.
describe("changesets", () => {
  const names = workspaceNames();
  it.each(files)("%s parses and names workspace packages", (file) => {
    const parsed = parse(readFileSync(join(dir, file), "utf8"));
    expect(parsed.releases.length).toBeGreaterThan(0);
    for (const release of parsed.releases) expect(names).toContain(release.name);
    expect(parsed.summary.length).toBeGreaterThan(0);
  });
});
