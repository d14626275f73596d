import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { S3Client } from "@aws-sdk/client-s3";

export type S3rverFixture = AsyncDisposable & {
  client: S3Client;
  bucket: string;
  endpoint: string;
};

const serverScript = fileURLToPath(new URL("./s3rver-server.mjs", import.meta.url));

/**
 * Starts s3rver in a child process on a random loopback port with a temp data directory.
 * Disposing it destroys the client, stops the server and removes the directory.
 */
export async function startS3rver(bucket = "pai-files"): Promise<S3rverFixture> {
  const directory = await mkdtemp(join(tmpdir(), "pai-s3rver-"));
  const child = fork(serverScript, [directory, bucket], { execPath: process.execPath, stdio: "inherit" });
  const exited = once(child, "exit");
  const [message] = (await Promise.race([
    once(child, "message"),
    exited.then(() => {
      throw new Error("s3rver exited before it was ready");
    }),
  ])) as [{ port: number }];
  const endpoint = `http://127.0.0.1:${message.port}`;
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  return {
    client,
    bucket,
    endpoint,
    async [Symbol.asyncDispose]() {
      client.destroy();
      if (child.exitCode === null) {
        child.send("shutdown");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}
