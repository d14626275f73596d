// `npm start`: runs the playground once it exists; until then says so clearly.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

const entry = new URL("../playground/package.json", import.meta.url);
if (!existsSync(entry)) {
  console.log("The PAI playground is not built yet (it lands with the playground issue).");
  console.log("Meanwhile: `npm test` runs the whole suite.");
  process.exit(0);
}
const child = spawn("npm", ["run", "start", "-w", "playground"], { stdio: "inherit" });
child.on("exit", (code) => process.exit(code ?? 0));
