// Runs s3rver in a child process so the tests measure only their own memory. The parent
// passes the data directory and bucket as arguments and receives the bound port over IPC.
import S3rver from "s3rver";

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port } = await server.run();
process.send?.({ port });
// Exit with the parent: on disconnect (parent gone) or on an explicit shutdown message.
const stop = () => server.close().finally(() => process.exit(0));
process.on("disconnect", stop);
process.on("message", (message) => {
  if (message === "shutdown") stop();
});
