import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import type { FilesV1 } from "@pai/core";
import { PaiError } from "@pai/core";
import { runFilesConformance } from "@pai/core/testing/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localFiles } from "../src/index.js";

const encoder = new TextEncoder();
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pai-files-local-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

runFilesConformance({ name: "local", create: () => localFiles({ directory: join(root, "conformance") }) });

/** Every path below `dir`, relative to it. */
async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((entry) => relative(dir, join(entry.parentPath, entry.name))).sort();
}

async function notFound(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => {
      throw new Error("expected NOT_FOUND");
    },
    (caught: unknown) => caught,
  );
  expect(PaiError.isInstance(error) && error.code).toBe("NOT_FOUND");
  return error as PaiError;
}

describe("localFiles on disk", () => {
  let sandbox: string;
  let store: string;
  let files: FilesV1;

  beforeAll(async () => {
    // The store sits two levels inside the sandbox, so "../.." from a scope dir lands in the sandbox.
    sandbox = await mkdtemp(join(root, "sandbox-"));
    store = join(sandbox, "store");
    files = localFiles({ directory: store });
  });

  it("keeps hostile filenames as metadata: nothing is written outside the directory", async () => {
    const scopeKey = "tenant-a";
    const names = [
      "../../escape.txt",
      "../../../../../../tmp/escape.txt",
      "/etc/passwd",
      "a/../../b.txt",
      "..",
    ];
    const saved = [];
    for (const filename of names) {
      saved.push(
        await files.save({
          scopeKey,
          userKey: null,
          threadId: null,
          body: encoder.encode(filename),
          mediaType: "text/plain",
          filename,
        }),
      );
    }
    // The sandbox holds only the store; the store holds one scope dir of ids and sidecars.
    expect(await readdir(sandbox)).toEqual(["store"]);
    const paths = await walk(store);
    const [scopeDir] = await readdir(store);
    expect(scopeDir).toMatch(/^[0-9a-f]{64}$/);
    const expected = saved.flatMap((file) =>
      [file.fileId, `${file.fileId}.json`].map((name) => join(scopeDir, name)),
    );
    expect(paths).toEqual([scopeDir, ...expected].sort());
    for (const path of paths) expect(path.split(sep)).not.toContain("..");
    for (const file of saved) {
      const sidecar = JSON.parse(await readFile(join(store, scopeDir, `${file.fileId}.json`), "utf8"));
      expect(sidecar.filename).toBe(file.filename);
    }
  });

  it("never resolves a traversal fileId, even when the target exists", async () => {
    const scopeKey = "tenant-b";
    await files.save({
      scopeKey,
      userKey: null,
      threadId: null,
      body: encoder.encode("x"),
      mediaType: "text/plain",
      filename: "x.txt",
    });
    // Plant a file (and a sidecar-shaped neighbour) where "../../secret" would point from a scope dir.
    const planted = { fileId: "../../secret", scopeKey, filename: "secret", size: 6 };
    await writeFile(join(sandbox, "secret"), "secret");
    await writeFile(join(sandbox, "secret.json"), JSON.stringify(planted));
    for (const fileId of [
      "../../secret",
      "../../../etc/passwd",
      "..%2f..%2fsecret",
      `..${sep}..${sep}secret`,
      "/etc/passwd",
      "file_00000000000000000000000000000000/../../../secret",
      ".tmp-anything",
    ]) {
      await notFound(files.head({ scopeKey, fileId }));
      await notFound(files.read({ scopeKey, fileId }));
      await notFound(files.delete({ scopeKey, fileId }));
    }
    expect(await readFile(join(sandbox, "secret"), "utf8")).toBe("secret");
    expect((await stat(join(sandbox, "secret.json"))).isFile()).toBe(true);
  });

  it("leaves no temp files behind after a failed save", async () => {
    const scopeKey = "tenant-c";
    const before = await walk(store);
    await files
      .save({
        scopeKey,
        userKey: null,
        threadId: null,
        body: encoder.encode("too long"),
        mediaType: "text/plain",
        filename: "x.txt",
        size: 3,
      })
      .catch(() => {});
    const after = (await walk(store)).filter((path) => !before.includes(path));
    // The scope directory may be created; nothing inside it may remain.
    expect(after.filter((path) => path.includes(sep))).toEqual([]);
  });

  it("rejects a missing directory option", () => {
    expect(() => localFiles({ directory: "" })).toThrow(/directory/);
  });
});
