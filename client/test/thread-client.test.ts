import { PaiError } from "@pai/core";
import { type ProjectedToolPart, projectThreadState } from "@pai/core/protocol";
import { describe, expect, it } from "vitest";
import {
  createPaiClient,
  isPaiToolPart,
  type PaiThreadState,
  serviceTransport,
  type ThreadClient,
} from "../src/index.js";
import { createFakePaiService } from "./fake-pai-service.js";

const alice = { userId: "alice", scopeKey: "acme" };
const mallory = { userId: "mallory", scopeKey: "evil" };

/** Resolves once `predicate` holds for the thread's state (checked on every change). */
function waitFor(thread: ThreadClient, predicate: (state: PaiThreadState) => boolean, ms = 5_000) {
  return new Promise<PaiThreadState>((resolve, reject) => {
    if (predicate(thread.getState())) return resolve(thread.getState());
    const timer = setTimeout(() => {
      stop();
      reject(
        new Error(`Timed out; last state: ${JSON.stringify(thread.getState(), null, 1).slice(0, 2000)}`),
      );
    }, ms);
    const stop = thread.subscribe(() => {
      if (!predicate(thread.getState())) return;
      clearTimeout(timer);
      stop();
      resolve(thread.getState());
    });
  });
}

function toolPart(state: PaiThreadState): ProjectedToolPart | undefined {
  return state.messages.flatMap((message) => message.parts).find(isPaiToolPart);
}

describe("@pai/client over an in-process transport (fake service)", () => {
  it("send -> suspend -> another client submits -> the first watcher sees the output and final text", async () => {
    const service = createFakePaiService();
    const first = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const second = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await first.createThread();
    const stopFirst = thread.watch();
    const other = second.thread(thread.id);
    const stopSecond = other.watch();

    await thread.send("approve the launch");
    const waiting = await waitFor(other, (state) => state.pending.length === 1);
    const [pending] = waiting.pending;
    expect(pending.name).toBe("requestApproval.approval");
    expect(pending.input).toEqual({ prompt: "approve the launch" });

    const message = waiting.messages.find((item) => item.role === "assistant")!;
    const part = message.parts.find(isPaiToolPart)!;
    expect(part.state).toBe("input-available");
    expect(part.pendingSuspension?.actionId).toBe(pending.ref.actionId);
    expect(part.data.progress?.[0].value).toEqual({ step: "asked" });
    expect(other.getPendingAction(message, part)?.ref).toEqual(pending.ref);

    await pending.submit({ approved: true });
    const done = await waitFor(
      thread,
      (state) => state.run?.status === "completed" && state.pending.length === 0,
    );
    const settled = toolPart(done)!;
    expect(settled.state).toBe("output-available");
    expect(settled.suspensions.map((item) => item.state)).toEqual(["submitted"]);
    expect(done.messages.at(-1)?.parts.at(-1)).toEqual({ type: "text", text: "Approved, sending." });

    // Live equals reload: the watcher's state equals a fresh projection of the service's rows.
    const fresh = projectThreadState(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(done.messages).toEqual(fresh.messages);
    expect(done.version).toBe(fresh.version);
    stopFirst();
    stopSecond();
  });

  it("streams live text deltas and clears them when the message commits", async () => {
    const service = createFakePaiService();
    const client = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await client.createThread();
    const deltas: string[] = [];
    thread.onLiveEvent((event) => {
      if (event.type === "text-delta") deltas.push(event.delta);
    });
    const stop = thread.watch();
    await waitFor(thread, (state) => state.connection === "open" || state.status === "ready");
    await thread.send("hello");
    const done = await waitFor(thread, (state) => state.run?.status === "completed");
    expect(deltas.join("")).toBe("echo: hello");
    expect(done.live).toEqual([]);
    expect(done.messages.at(-1)?.parts).toEqual([{ type: "text", text: "echo: hello" }]);
    stop();
  });

  it("cancel of a pending action shows part.cancelled; fail shows a plain output-error", async () => {
    const service = createFakePaiService();
    const client = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await client.createThread();
    const stop = thread.watch();
    await thread.send("approve A");
    let state = await waitFor(thread, (current) => current.pending.length === 1);
    await state.pending[0].cancel({ reason: "not needed" });
    state = await waitFor(thread, (current) => current.run?.status === "completed");
    expect(toolPart(state)).toMatchObject({ state: "output-error", cancelled: true });

    const second = await client.createThread();
    const stopSecond = second.watch();
    await second.send("approve B");
    state = await waitFor(second, (current) => current.pending.length === 1);
    await state.pending[0].fail(new Error("approver unavailable"));
    state = await waitFor(second, (current) => current.run?.status === "completed");
    expect(toolPart(state)).toMatchObject({
      state: "output-error",
      errorText: "approver unavailable",
      cancelled: false,
    });
    stop();
    stopSecond();
  });

  it("run cancellation marks waiting calls cancelled, live and after reload", async () => {
    const service = createFakePaiService();
    const client = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await client.createThread();
    const stop = thread.watch();
    await thread.send("approve C");
    await waitFor(thread, (current) => current.pending.length === 1);
    await thread.cancel("changed my mind");
    const live = await waitFor(thread, (current) => current.run?.status === "cancelled");
    expect(toolPart(live)).toMatchObject({ state: "output-error", cancelled: true });
    stop();
    const reloaded = await createPaiClient({ transport: serviceTransport({ service, identity: alice }) })
      .thread(thread.id)
      .refresh();
    expect(reloaded.messages).toEqual(live.messages);
  });

  it("rejects invalid submit payloads with INVALID_INPUT and leaves the action pending", async () => {
    const service = createFakePaiService();
    const client = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await client.createThread();
    await thread.send("approve D");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const state = await thread.refresh();
    const before = service.commitCount();
    const error = await state.pending[0].submit({ approved: "yes" }).catch((caught: unknown) => caught);
    expect(PaiError.isInstance(error) && error.code).toBe("INVALID_INPUT");
    expect(service.commitCount()).toBe(before);
    expect((await thread.refresh()).pending).toHaveLength(1);
  });

  it("stops watching with a NOT_FOUND error for a thread of another scope", async () => {
    const service = createFakePaiService();
    const owner = createPaiClient({ transport: serviceTransport({ service, identity: alice }) });
    const thread = await owner.createThread();
    const intruder = createPaiClient({ transport: serviceTransport({ service, identity: mallory }) }).thread(
      thread.id,
    );
    const stop = intruder.watch();
    const state = await waitFor(intruder, (current) => current.status === "error");
    expect(state.error?.code).toBe("NOT_FOUND");
    expect(state.connection).toBe("closed");
    stop();
  });

  it("reconnects after the stream drops and resumes after its last version", async () => {
    const service = createFakePaiService();
    let drops = 1;
    const base = serviceTransport({ service, identity: alice });
    const afterVersions: Array<number | undefined> = [];
    // A transport whose first stream breaks after delivering one event.
    const transport = {
      ...base,
      threads: {
        ...base.threads,
        watch(input: Parameters<typeof base.threads.watch>[0]) {
          afterVersions.push(input.afterVersion);
          const inner = base.threads.watch(input);
          const shouldDrop = drops-- > 0;
          return {
            async *[Symbol.asyncIterator]() {
              let seen = 0;
              for await (const event of inner) {
                yield event;
                if (shouldDrop && event.type === "committed" && ++seen === 1)
                  throw new Error("socket hang up");
              }
            },
          };
        },
      },
    };
    const client = createPaiClient({ transport });
    const thread = await client.createThread();
    const stop = thread.watch({ retryDelayMs: 5 });
    await waitFor(thread, (state) => state.status === "ready");
    await thread.send("approve E");
    const state = await waitFor(thread, (current) => current.pending.length === 1);
    expect(afterVersions.length).toBeGreaterThanOrEqual(2);
    expect(afterVersions[1]).toBe(1);
    const fresh = projectThreadState(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(state.messages).toEqual(fresh.messages);
    stop();
  });
});
