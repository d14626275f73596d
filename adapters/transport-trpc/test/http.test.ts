import { createPaiClient, isPaiToolPart, type PaiThreadState, type ThreadClient } from "@pai/client";
import { PaiError, type WatchEvent } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { EventSource } from "eventsource";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import { createFakePaiService, type FakePaiService } from "../../../client/test/fake-pai-service.js";
import type { ClientViewEvent } from "../src/index.js";
import { type HostRouter, type HostUser, type RunningHost, startHost, transportFor } from "./host-app.js";

const alice: HostUser = { userId: "alice", scopeKey: "acme" };
const bob: HostUser = { userId: "bob", scopeKey: "acme" };
const mallory: HostUser = { userId: "mallory", scopeKey: "evil" };

const hosts: RunningHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

async function start(service: FakePaiService, options: Parameters<typeof startHost>[1] = {}) {
  const host = await startHost(service, options);
  hosts.push(host);
  return host;
}

function waitFor(thread: ThreadClient, predicate: (state: PaiThreadState) => boolean, ms = 45_000) {
  return new Promise<PaiThreadState>((resolve, reject) => {
    if (predicate(thread.getState())) return resolve(thread.getState());
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`Timed out; state: ${JSON.stringify(thread.getState()).slice(0, 1500)}`));
    }, ms);
    const stop = thread.subscribe(() => {
      if (!predicate(thread.getState())) return;
      clearTimeout(timer);
      stop();
      resolve(thread.getState());
    });
  });
}

function typedClient(url: string, user: HostUser | null) {
  const headers = () => (user ? { authorization: `Bearer ${user.userId}:${user.scopeKey}` } : {});
  return createTRPCClient<HostRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          EventSource,
          eventSourceOptions: async () => ({
            fetch: (input: string | URL | Request, init?: RequestInit) => {
              const merged = new Headers(init?.headers);
              for (const [name, value] of Object.entries(headers())) merged.set(name, value);
              return fetch(input, { ...init, headers: merged });
            },
          }),
        }),
        false: httpBatchLink({ url, transformer: superjson, headers }),
      }),
    ],
  });
}

async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
  if (!PaiError.isInstance(error)) throw error;
  return error;
}

describe("host app with PAI mounted under `pai` (real HTTP server, @trpc/client)", () => {
  it("keeps the host's own procedures, middleware and transformer working beside PAI", async () => {
    const host = await start(createFakePaiService());
    const trpc = typedClient(host.url, alice);
    expect(await trpc.me.query({ greeting: "hi" })).toBe("hi, alice");
    // superjson from the host's instance applies: a Date survives the wire.
    expect((await trpc.health.query()).at).toBeInstanceOf(Date);
    const thread = await trpc.pai.threads.create.mutate({ title: "from typed client" });
    expect(thread.title).toBe("from typed client");
    const view = await trpc.pai.threads.get.query({ threadId: thread.threadId });
    expect(view.thread.threadId).toBe(thread.threadId);
    // The client view carries no tenant key (nor any other internal field).
    expect(view.thread).not.toHaveProperty("scopeKey");
    expect(thread).not.toHaveProperty("scopeKey");
  });

  it("full flow: send -> suspend -> second client sees pending via watch -> submit -> first sees output", async () => {
    const service = createFakePaiService();
    const host = await start(service);
    const first = createPaiClient({ transport: transportFor(host.url, alice) });
    const second = createPaiClient({ transport: transportFor(host.url, bob) });
    const thread = await first.createThread({ title: "launch" });
    const stopFirst = thread.watch();
    const other = second.thread(thread.id);
    const stopSecond = other.watch();
    await waitFor(thread, (state) => state.connection === "open");
    await waitFor(other, (state) => state.connection === "open");

    await thread.send("approve the launch");
    const waiting = await waitFor(other, (state) => state.pending.length === 1);
    const action = waiting.pending[0];
    expect(action.name).toBe("requestApproval.approval");
    const message = waiting.messages.find((item) => item.id === action.origin.messageId)!;
    const part = message.parts.find(isPaiToolPart)!;
    expect(part.pendingSuspension?.input).toEqual({ prompt: "approve the launch" });
    expect(other.getPendingAction(message, part)?.ref.actionId).toBe(action.ref.actionId);

    await action.submit({ approved: true });
    const done = await waitFor(
      thread,
      (state) => state.run?.status === "completed" && state.pending.length === 0,
    );
    const settled = done.messages.flatMap((item) => item.parts).find(isPaiToolPart)!;
    expect(settled).toMatchObject({ state: "output-available", output: { approved: true } });
    expect(done.messages.at(-1)?.parts.at(-1)).toEqual({ type: "text", text: "Approved, sending." });
    const fresh = projectThreadState(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(done.messages).toEqual(fresh.messages);
    expect(done.version).toBe(fresh.version);
    stopFirst();
    stopSecond();
  });

  it("events yields committed events tracked by version and resumes after lastEventId", async () => {
    const service = createFakePaiService();
    const host = await start(service);
    const pai = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await pai.createThread();
    await thread.send("hello");
    await thread.send("again");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(service.log(thread.id).map((item) => item.version)).toEqual([1, 2, 3, 4]);

    const trpc = typedClient(host.url, alice);
    const controller = new AbortController();
    const received: Array<{ id?: string; version: number }> = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = trpc.pai.threads.events.subscribe(
        { threadId: thread.id, lastEventId: "2" },
        {
          signal: controller.signal,
          onData: (value) => {
            const tracked = value as { id: string; data: WatchEvent };
            if (tracked.data.type === "committed")
              received.push({ id: tracked.id, version: tracked.data.version });
            if (received.length === 2) {
              subscription.unsubscribe();
              resolve();
            }
          },
          onError: reject,
        },
      );
    });
    controller.abort();
    expect(received).toEqual([
      { id: "3", version: 3 },
      { id: "4", version: 4 },
    ]);
  });

  it("watch yields the client view after every version and resumes after lastEventId", async () => {
    const service = createFakePaiService();
    const host = await start(service);
    const pai = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await pai.createThread();
    await thread.send("hello");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const trpc = typedClient(host.url, alice);
    const next = (lastEventId: string | undefined, count: number) => {
      const controller = new AbortController();
      const received: Array<{ id: string; data: ClientViewEvent }> = [];
      return new Promise<typeof received>((resolve, reject) => {
        const subscription = trpc.pai.threads.watch.subscribe(
          { threadId: thread.id, ...(lastEventId ? { lastEventId } : {}) },
          {
            signal: controller.signal,
            onData: (value) => {
              const item = value as { id: string; data: ClientViewEvent };
              if (item.data.type !== "state") return;
              received.push(item);
              if (received.length === count) {
                subscription.unsubscribe();
                controller.abort();
                resolve(received);
              }
            },
            onError: reject,
          },
        );
      });
    };
    const [first] = await next(undefined, 1);
    const version = service.log(thread.id).at(-1)!.version;
    expect(first!.id).toBe(String(version));
    const state = first!.data as Extract<ClientViewEvent, { type: "state" }>;
    expect(state.version).toBe(version);
    expect(state.view.thread.threadId).toBe(thread.id);
    expect(state.view.thread).not.toHaveProperty("scopeKey");
    expect(state.view.messages.map((message) => message.role)).toContain("user");

    // Resuming at the current version yields nothing old: the next state is the next commit's.
    const later = next(String(version), 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await thread.send("again");
    const [after] = await later;
    expect(Number(after!.id)).toBeGreaterThan(version);
    expect((after!.data as Extract<ClientViewEvent, { type: "state" }>).view.version).toBe(Number(after!.id));
  });

  it("reconnect: the SSE stream is cut mid-run and the watcher ends with the same state as an uninterrupted one", async () => {
    const service = createFakePaiService();
    const host = await start(service);
    const steady = createPaiClient({ transport: transportFor(host.url, alice) });
    const flaky = createPaiClient({ transport: transportFor(host.url, bob) });
    const thread = await steady.createThread();
    const flakyThread = flaky.thread(thread.id);
    const stops = [thread.watch(), flakyThread.watch({ retryDelayMs: 20 })];
    await waitFor(flakyThread, (state) => state.connection === "open");

    await thread.send("approve one");
    await waitFor(flakyThread, (state) => state.pending.length === 1);
    // Cut every connection (both watchers' SSE streams) in the middle of the run.
    host.cutConnections();
    // The submit waits for the client to see its sockets closed: a POST written to a keep-alive
    // socket the server destroyed a moment ago fails with "other side closed" (fetch never
    // retries a POST). That is a race of this test's own cut, not what it is about.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await steady.thread(thread.id).getState().pending[0]?.submit({ approved: false });
    const expected = await waitFor(thread, (state) => state.run?.status === "completed");
    const resumed = await waitFor(flakyThread, (state) => state.version === expected.version);
    expect(resumed.messages).toEqual(expected.messages);
    expect(resumed.pending).toEqual([]);
    const fresh = projectThreadState(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(resumed.messages).toEqual(fresh.messages);
    for (const stop of stops) stop();
  });

  it("maps errors: NOT_FOUND across scopes, INVALID_INPUT with issues, CONFLICT, UNAUTHORIZED, redacted INTERNAL", async () => {
    const service = createFakePaiService();
    const internal: unknown[] = [];
    const host = await start(
      {
        ...service,
        manifest: async () => {
          throw new Error("database password is hunter2");
        },
      },
      { onInternalError: (error) => internal.push(error) },
    );
    const owner = createPaiClient({ transport: transportFor(host.url, alice) });
    const intruder = createPaiClient({ transport: transportFor(host.url, mallory) });
    const anonymous = createPaiClient({ transport: transportFor(host.url, null) });
    const thread = await owner.createThread();
    await thread.send("approve X");
    await new Promise((resolve) => setTimeout(resolve, 30));
    const { pending } = await thread.refresh();
    const actionId = pending[0].ref.actionId;

    // Another scope: thread and action are NOT_FOUND, exactly like missing ones.
    expect((await rejection(intruder.thread(thread.id).refresh())).code).toBe("NOT_FOUND");
    expect(
      (await rejection(intruder.transport.actions.submit({ threadId: thread.id, actionId, payload: {} })))
        .code,
    ).toBe("NOT_FOUND");
    expect((await rejection(owner.thread("nope").refresh())).code).toBe("NOT_FOUND");
    const file = await owner.files.upload({
      filename: "a.txt",
      mediaType: "text/plain",
      file: new Uint8Array([1]),
    });
    expect((await rejection(intruder.files.get({ fileId: file.fileId }))).code).toBe("NOT_FOUND");

    // A service validation error keeps its message and issues.
    const invalid = await rejection(pending[0].submit({ approved: "yes" }));
    expect(invalid.code).toBe("INVALID_INPUT");
    expect(invalid.message).toMatch(/expected \{ approved: boolean \}/);
    expect(invalid.issues).toEqual([{ message: "Expected boolean", path: ["approved"] }]);

    // Zod input validation: BAD_REQUEST with the issues.
    const badInput = await rejection(owner.transport.threads.get({ threadId: "" }));
    expect(badInput.code).toBe("INVALID_INPUT");
    expect(badInput.issues?.[0].path).toEqual(["threadId"]);

    // A lost race is a CONFLICT.
    expect((await rejection(thread.send("again"))).code).toBe("CONFLICT");

    // No identity: the host's middleware refuses (UNAUTHORIZED, FORBIDDEN for the client).
    expect((await rejection(anonymous.listThreads())).code).toBe("FORBIDDEN");

    // Unexpected errors are redacted for clients and reported in full to the host.
    const redacted = await rejection(owner.manifest());
    expect(redacted.code).toBe("INTERNAL");
    expect(redacted.message).not.toMatch(/hunter2/);
    expect(String(internal[0])).toMatch(/hunter2/);
  });

  it("answers with the HTTP status of each mapped code (412 for TOOL_DISABLED, 413 for PAYLOAD_TOO_LARGE)", async () => {
    const service = createFakePaiService();
    const host = await start({
      ...service,
      actions: {
        ...service.actions,
        submit: async () => {
          throw new PaiError("TOOL_DISABLED", "requestApproval is disabled; cancel the action instead.");
        },
      },
    });
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const error = await rejection(
      client.transport.actions.submit({ threadId: "t", actionId: "a", payload: 1 }),
    );
    expect(error.code).toBe("TOOL_DISABLED");
    expect(error.message).toMatch(/cancel the action instead/);

    const response = await fetch(`${host.url}/pai.actions.submit?batch=1`, {
      method: "POST",
      headers: { authorization: "Bearer alice:acme", "content-type": "application/json" },
      body: JSON.stringify({ 0: { json: { threadId: "t", actionId: "a", payload: 1 } } }),
    });
    expect(response.status).toBe(412);

    const big = await fetch(`${host.url}/pai.actions.submit?batch=1`, {
      method: "POST",
      headers: { authorization: "Bearer alice:acme", "content-type": "application/json" },
      body: JSON.stringify({ 0: { json: { threadId: "t", actionId: "a", payload: "x".repeat(300_000) } } }),
    });
    expect(big.status).toBe(400);
  });

  it("uploads and reads files as base64, or returns a download URL when the provider presigns", async () => {
    const plain = await start(createFakePaiService());
    const client = createPaiClient({ transport: transportFor(plain.url, alice) });
    const body = new Uint8Array(70_000).map((_, index) => index % 251);
    const uploaded = await client.files.upload({
      filename: "data.bin",
      mediaType: "application/octet-stream",
      file: body,
    });
    expect(uploaded).toMatchObject({ size: body.byteLength, userKey: "alice" });
    expect(uploaded).not.toHaveProperty("scopeKey");
    const fetched = await client.files.get({ fileId: uploaded.fileId });
    expect(fetched.body).toEqual(body);
    expect(fetched.file.filename).toBe("data.bin");

    const presigned = await start(createFakePaiService({ presignFiles: true }));
    const presignedClient = createPaiClient({ transport: transportFor(presigned.url, alice) });
    const file = await presignedClient.files.upload({
      filename: "a.txt",
      mediaType: "text/plain",
      file: body,
    });
    const viaUrl = await presignedClient.files.get({ fileId: file.fileId });
    expect(viaUrl.downloadUrl).toMatch(/^https:\/\/files\.example\.test\//);
    expect((await presignedClient.files.get({ fileId: file.fileId, inline: true })).body).toEqual(body);

    const limited = await start(createFakePaiService(), { limits: { maxUploadBytes: 1024 } });
    const limitedClient = createPaiClient({ transport: transportFor(limited.url, alice) });
    const tooBig = await rejection(
      limitedClient.files.upload({ filename: "big.bin", mediaType: "application/octet-stream", file: body }),
    );
    expect(tooBig.code).toBe("PAYLOAD_TOO_LARGE");
    expect(tooBig.message).toMatch(/limited to 1024 bytes/);
  });

  it("sends one HTTP request per call by default, and batches concurrent calls when batch is on", async () => {
    const host = await start(createFakePaiService());
    const single = transportFor(host.url, alice);
    const { threadId } = await single.threads.create({ title: "requests" });
    host.requests.length = 0;
    const [first, second] = await Promise.all([
      single.threads.get({ threadId }),
      single.threads.get({ threadId }),
    ]);
    expect(first.thread.title).toBe("requests");
    expect(second).toEqual(first);
    expect(host.requests).toHaveLength(2);
    for (const url of host.requests) expect(url).toMatch(/^\/pai\.threads\.snapshot\?input=/);

    const batched = transportFor(host.url, alice, { batch: true });
    host.requests.length = 0;
    const [third, fourth] = await Promise.all([
      batched.threads.get({ threadId }),
      batched.threads.get({ threadId }),
    ]);
    expect([third, fourth]).toEqual([first, first]);
    expect(host.requests).toHaveLength(1);
    expect(host.requests[0]).toMatch(/^\/pai\.threads\.snapshot,pai\.threads\.snapshot\?batch=1&/);
  });

  it("paginates threads with a cursor", async () => {
    const host = await start(createFakePaiService());
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    for (let index = 0; index < 5; index++) await client.createThread({ title: `t${index}` });
    const first = await client.listThreads({ limit: 2 });
    const second = await client.listThreads({ limit: 2, cursor: first.nextCursor });
    const third = await client.listThreads({ limit: 2, cursor: second.nextCursor });
    expect([...first.items, ...second.items, ...third.items].map((item) => item.title)).toEqual([
      "t0",
      "t1",
      "t2",
      "t3",
      "t4",
    ]);
    expect(third.nextCursor).toBeNull();
  });
});
