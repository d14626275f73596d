import { createPaiClient, type PaiThreadState, type ThreadClient } from "@pai/client";
import { type ScriptedStep, scriptedModel } from "@pai/core/testing";
import { createTrpcTransport } from "@pai/transport-trpc/client";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import type { AppAgent } from "./agent.ts";
import { type App, startApp } from "./app.ts";
import { type Database, openTestDatabase } from "./db.ts";

// Each test starts the real server on a free port with a fresh database and a scripted model
// (it answers with the steps given, in order), and talks to it over HTTP like the web page does.

const running: Array<{ app: App; database: Database }> = [];

async function startTestApp(steps: ScriptedStep[]) {
  const model = scriptedModel(steps);
  const database = await openTestDatabase();
  const app = await startApp({ db: database.db, model, port: 0, log: () => {} });
  running.push({ app, database });
  const client = createPaiClient<AppAgent>({
    transport: createTrpcTransport({ url: `${app.url}/api/trpc`, transformer: superjson }),
  });
  return { app, model, client };
}

afterEach(async () => {
  for (const { app, database } of running.splice(0)) {
    await app.close();
    await database.close();
  }
});

/** Reloads the thread until `check` holds (runs continue in the background after `send`). */
async function until(thread: ThreadClient<AppAgent>, check: (state: PaiThreadState<AppAgent>) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const state = await thread.refresh();
    if (check(state)) return state;
    if (Date.now() > deadline) throw new Error(`Timed out; the run is ${state.run?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function lastAssistantText(state: PaiThreadState<AppAgent>): string {
  const message = state.messages.findLast((item) => item.role === "assistant");
  return (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ");
}

const askApproval: ScriptedStep = {
  text: "I need your approval first.",
  toolCalls: [{ toolName: "requestApproval", input: { summary: "Send the launch email" } }],
};

describe("the app over HTTP", () => {
  it("answers the health check", async () => {
    const { app } = await startTestApp([]);
    const response = await fetch(`${app.url}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("waits for approval, then finishes the run once approved", async () => {
    const { client, model } = await startTestApp([askApproval, { text: "Sent." }]);
    const thread = await client.createThread({ agentId: "main" });
    await thread.send("Please send the launch email");

    const waiting = await until(thread, (state) => state.pending.length > 0);
    expect(waiting.run?.status).toBe("waiting");
    const approval = thread.action("requestApproval.approval");
    expect(approval?.input).toEqual({ prompt: "Send the launch email" });

    await approval?.submit({ approved: true });
    const done = await until(thread, (state) => state.run?.status === "completed");
    expect(done.pending).toEqual([]);
    expect(lastAssistantText(done)).toContain("Sent.");
    // The model saw the tool's result before its last answer.
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('"approved":true');
  });

  it("tells the model when the user denies", async () => {
    const { client, model } = await startTestApp([askApproval, { text: "Not sent." }]);
    const thread = await client.createThread({ agentId: "main" });
    await thread.send("Please send the launch email");
    await until(thread, (state) => state.pending.length > 0);

    await thread.action("requestApproval.approval")?.submit({ approved: false });
    const done = await until(thread, (state) => state.run?.status === "completed");
    expect(lastAssistantText(done)).toContain("Not sent.");
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('"approved":false');
  });

  it("waits for the browser to answer the client tool", async () => {
    const { client } = await startTestApp([
      { toolCalls: [{ toolName: "getLocalTime", input: {} }] },
      { text: "It is 09:30 in Europe/Paris." },
    ]);
    const thread = await client.createThread({ agentId: "main" });
    await thread.send("What time is it?");
    await until(thread, (state) => state.pending.length > 0);

    // What web/pai.ts does in the browser.
    await thread.action("getLocalTime.output")?.submit({ time: "09:30", timeZone: "Europe/Paris" });
    const done = await until(thread, (state) => state.run?.status === "completed");
    expect(lastAssistantText(done)).toContain("09:30");
  });

  it("refuses requests without a user", async () => {
    const { app } = await startTestApp([]);
    const response = await fetch(`${app.url}/api/trpc/pai.threads.list`, {
      headers: { "x-user": "not a user!" },
    });
    expect(response.status).toBe(401);
  });
});
