// @vitest-environment jsdom
// biome-ignore-all lint/correctness/noComponentHookFactories: each test declares its own components around a fresh binding.
import { createPaiClient, isPaiToolPart, type PaiClient, type PaiTransport } from "@pai/client";
import type { ClientToolErrorInfo } from "@pai/react";
import { createPaiReact, ThreadProvider, ToolPart, useThread } from "@pai/react";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type Agents, createHarness, type Harness } from "./fixtures.js";

const WAIT = { timeout: 5_000 };
/** How long a test waits to show that something does NOT happen (each such wait has a positive control). */
const QUIET_MS = 200;
const harnesses: Harness[] = [];
const stops: Array<() => void> = [];

async function harness(script: Parameters<typeof createHarness>[0]): Promise<Harness> {
  const created = await createHarness(script);
  harnesses.push(created);
  return created;
}

afterEach(async () => {
  cleanup();
  for (const stop of stops.splice(0)) stop();
  for (const created of harnesses.splice(0)) await created.runtime.close();
});

const quiet = () => new Promise((resolve) => setTimeout(resolve, QUIET_MS));

/**
 * One thread's view: its connection, every tool part (a registered renderer, else a fallback
 * showing the derived state under `<label>-tool`), and a "send <label>" button.
 */
function ThreadView({ label }: { label: string }) {
  const thread = useThread();
  const [error, setError] = useState<string | null>(null);
  return (
    <section>
      <span data-testid={`${label}-connection`}>{thread.state.connection}</span>
      {thread.messages.flatMap((message) =>
        message.parts
          .filter(isPaiToolPart)
          .map((part) => (
            <ToolPart
              key={part.toolCallId}
              message={message}
              part={part}
              fallback={({ state }) => <span data-testid={`${label}-tool`}>{state}</span>}
            />
          )),
      )}
      <button
        type="button"
        onClick={() => thread.send("go").catch((cause: Error) => setError(cause.message))}
      >
        send {label}
      </button>
      {error ? <p>send failed: {error}</p> : null}
    </section>
  );
}

const selectionScript = [
  { toolCalls: [{ toolName: "getSelectedText", input: {}, toolCallId: "call-sel" }] },
  { text: "You selected something." },
];

type ActionCall = { kind: "submit" | "cancel" | "fail"; input: { actionId: string; [key: string]: unknown } };

/** A client over the same server whose action commands (submit, cancel, fail) are recorded. */
function recordingClient(base: PaiClient): { client: PaiClient; calls: ActionCall[] } {
  const calls: ActionCall[] = [];
  const { actions } = base.transport;
  const transport: PaiTransport = {
    ...base.transport,
    actions: {
      ...actions,
      submit: (input) => {
        calls.push({ kind: "submit", input });
        return actions.submit(input);
      },
      cancel: (input) => {
        calls.push({ kind: "cancel", input });
        return actions.cancel(input);
      },
      fail: (input) => {
        calls.push({ kind: "fail", input });
        return actions.fail(input);
      },
    },
  };
  return { client: createPaiClient({ transport }), calls };
}

/**
 * A transport whose watch stream can lose its connection, like a dropped SSE/WebSocket stream:
 * `goOffline()` ends every open stream with an error and makes new ones fail until `goOnline()`.
 * Commands (send, submit) keep working; only the live stream is down.
 */
function droppableTransport(base: PaiTransport) {
  let online = true;
  let opened = 0;
  const open = new Set<AbortController>();
  const transport: PaiTransport = {
    ...base,
    threads: {
      ...base.threads,
      watch: ({ signal, ...input }) => ({
        async *[Symbol.asyncIterator]() {
          if (!online) throw new Error("network is offline");
          const link = new AbortController();
          const forward = () => link.abort();
          signal?.addEventListener("abort", forward, { once: true });
          if (signal?.aborted) link.abort();
          open.add(link);
          let dropped = false;
          const drop = () => {
            dropped = true;
          };
          link.signal.addEventListener("abort", drop, { once: true });
          try {
            yield* base.threads.watch({
              ...input,
              signal: link.signal,
              onOpen: () => {
                opened += 1;
                input.onOpen?.();
              },
            });
            if (dropped && !signal?.aborted) throw new Error("connection lost");
          } finally {
            open.delete(link);
            signal?.removeEventListener("abort", forward);
          }
        },
      }),
    },
  };
  return {
    transport,
    /** Streams established so far. */
    opened: () => opened,
    goOffline() {
      online = false;
      for (const link of [...open]) link.abort();
    },
    goOnline() {
      online = true;
    },
  };
}

describe("registration scope (03:134-135)", () => {
  it("a useClientTool under a ThreadProvider answers only that thread; one directly under Pai.Provider answers descendant threads", async () => {
    const {
      runtime,
      client,
      threadId: threadA,
    } = await harness([
      { toolCalls: [{ toolName: "getSelectedText", input: {}, toolCallId: "call-b" }] },
      { toolCalls: [{ toolName: "getSelectedText", input: {}, toolCallId: "call-a" }] },
      { text: "Thread A answered." },
      { text: "Thread B answered." },
    ]);
    const threadB = await runtime.createThread();
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const scopedExecute = vi.fn(async () => ({ text: "from thread A's handler" }));
    const wideExecute = vi.fn(async () => ({ text: "from the provider-wide handler" }));
    function ScopedHandler() {
      Main.useClientTool("getSelectedText", { execute: scopedExecute });
      return null;
    }
    function WideHandler() {
      Main.useClientTool("getSelectedText", { execute: wideExecute });
      return null;
    }
    // One provider observes both threads; only thread A's subtree holds a handler at first.
    function Page({ wide }: { wide: boolean }) {
      return (
        <Pai.Provider client={client}>
          <ThreadProvider threadId={threadA}>
            <ScopedHandler />
            <ThreadView label="A" />
          </ThreadProvider>
          <ThreadProvider threadId={threadB}>
            <ThreadView label="B" />
          </ThreadProvider>
          {wide ? <WideHandler /> : null}
        </Pai.Provider>
      );
    }
    const { rerender } = render(<Page wide={false} />);

    fireEvent.click(screen.getByText("send B"));
    await waitFor(() => expect(screen.getByTestId("B-tool").textContent).toBe("waiting"), WAIT);
    await runtime.waitForIdle(threadB);

    // Positive control: thread A's handler is live and answers its own thread's call, while
    // thread B's action is visible to the same provider the whole time.
    fireEvent.click(screen.getByText("send A"));
    await waitFor(async () => expect(await runtime.lastText(threadA)).toBe("Thread A answered."), WAIT);
    await waitFor(() => expect(screen.getByTestId("A-tool").textContent).toBe("done"), WAIT);
    expect(scopedExecute).toHaveBeenCalledTimes(1);
    expect(scopedExecute.mock.calls[0]).toMatchObject([{}, { threadId: threadA, toolCallId: "call-a" }]);
    expect(await runtime.pending(threadA)).toEqual([]);

    // Thread B's action was never answered by thread A's handler.
    expect(screen.getByTestId("B-tool").textContent).toBe("waiting");
    expect((await runtime.pending(threadB)).map((action) => action.name)).toEqual(["getSelectedText.output"]);
    expect((await runtime.toolParts(threadB))[0]).toMatchObject({
      toolCallId: "call-b",
      state: "input-available",
    });

    // A registration directly under the provider applies to its descendant threads: it answers B.
    rerender(<Page wide />);
    await waitFor(async () => expect(await runtime.lastText(threadB)).toBe("Thread B answered."), WAIT);
    await waitFor(() => expect(screen.getByTestId("B-tool").textContent).toBe("done"), WAIT);
    expect(wideExecute).toHaveBeenCalledTimes(1);
    expect(wideExecute.mock.calls[0]).toMatchObject([{}, { threadId: threadB, toolCallId: "call-b" }]);
    expect((await runtime.toolParts(threadB))[0]).toMatchObject({
      toolCallId: "call-b",
      state: "output-available",
      output: { text: "from the provider-wide handler" },
    });
    expect(scopedExecute).toHaveBeenCalledTimes(1);
    expect(await runtime.pending(threadB)).toEqual([]);
  });
});

describe("reconnects (03:137)", () => {
  it("after the watch stream drops and reconnects, the mounted registration answers the action created during the outage", async () => {
    const { runtime, client: direct, threadId } = await harness(selectionScript);
    const network = droppableTransport(direct.transport);
    const client = createPaiClient({ transport: network.transport });
    // Public watch options: reconnect quickly so the test does not sit in the default backoff.
    stops.push(client.thread(threadId).watch({ retryDelayMs: 10, maxRetryDelayMs: 50 }));
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const execute = vi.fn(async () => ({ text: "answered after the reconnect" }));
    function Handler() {
      Main.useClientTool("getSelectedText", { execute });
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Handler />
          <ThreadView label="main" />
        </ThreadProvider>
      </Pai.Provider>,
    );
    await waitFor(() => expect(screen.getByTestId("main-connection").textContent).toBe("open"), WAIT);
    const openedBeforeDrop = network.opened();

    network.goOffline();
    await waitFor(() => expect(screen.getByTestId("main-connection").textContent).toBe("connecting"), WAIT);
    // Commands still reach the server: the run starts and its client tool call waits.
    fireEvent.click(screen.getByText("send main"));
    await waitFor(
      async () =>
        expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
          "getSelectedText.output",
        ]),
      WAIT,
    );
    await runtime.waitForIdle(threadId);
    // The client has not seen the action while its stream is down, so nothing ran yet.
    expect(client.thread(threadId).getState().pending).toEqual([]);
    expect(screen.queryByTestId("main-tool")).toBeNull();
    expect(execute).not.toHaveBeenCalled();

    network.goOnline();
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    await waitFor(() => expect(screen.getByTestId("main-tool").textContent).toBe("done"), WAIT);
    expect(screen.getByTestId("main-connection").textContent).toBe("open");
    expect(network.opened()).toBeGreaterThan(openedBeforeDrop);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]).toMatchObject([{}, { threadId, toolCallId: "call-sel" }]);
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      state: "output-available",
      output: { text: "answered after the reconnect" },
    });
    expect(await runtime.pending(threadId)).toEqual([]);
  });

  it("a remounted provider registers its local tools again and answers an action that waited while it was gone", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const execute = vi.fn(async () => ({ text: "answered after the remount" }));
    function Handler() {
      Main.useClientTool("getSelectedText", { execute });
      return null;
    }
    function Page({ mounted }: { mounted: boolean }) {
      return mounted ? (
        <Pai.Provider client={client}>
          <ThreadProvider threadId={threadId}>
            <Handler />
            <ThreadView label="main" />
          </ThreadProvider>
        </Pai.Provider>
      ) : (
        <p>provider unmounted</p>
      );
    }
    const { rerender } = render(<Page mounted />);
    await waitFor(() => expect(screen.getByTestId("main-connection").textContent).toBe("open"), WAIT);

    rerender(<Page mounted={false} />);
    // Another client starts the run while this page has no provider: the call waits.
    await runtime.send(threadId, "go");
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    expect(execute).not.toHaveBeenCalled();

    // The same client (a module-level singleton in an app) under a freshly mounted provider.
    rerender(<Page mounted />);
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    await waitFor(() => expect(screen.getByTestId("main-tool").textContent).toBe("done"), WAIT);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]).toMatchObject([{}, { threadId, toolCallId: "call-sel" }]);
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      state: "output-available",
      output: { text: "answered after the remount" },
    });
  });
});

describe("render-only registrations (03:150-168)", () => {
  it("for a server-declared tool: purely local, nothing runs automatically, the action waits for the renderer's submit", async () => {
    const { runtime, client: direct, threadId } = await harness(selectionScript);
    const { client, calls } = recordingClient(direct);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const rendered: string[] = [];
    function SelectionUi() {
      Main.useClientTool("getSelectedText", {
        render: ({ state, action, output }) => {
          rendered.push(state);
          return (
            <div data-testid="selection" data-state={state}>
              {state === "waiting" ? (
                <button type="button" onClick={() => void action.submit({ text: "picked in the UI" })}>
                  answer {action.name}
                </button>
              ) : null}
              {state === "done" ? <span>output: {output.text}</span> : null}
            </div>
          );
        },
      });
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <SelectionUi />
          <ThreadView label="main" />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send main"));
    const answer = await screen.findByText("answer getSelectedText.output", {}, WAIT);
    expect(screen.getByTestId("selection").dataset.state).toBe("waiting");
    await runtime.waitForIdle(threadId);
    // Purely local: the request carried no client-tool definition for it.
    expect((await runtime.lastRun(threadId))?.clientTools).toEqual([]);

    // Nothing answers it on its own: no submit, cancel or fail goes out, and it stays waiting.
    await quiet();
    expect(calls).toEqual([]);
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    expect(screen.getByTestId("selection").dataset.state).toBe("waiting");

    // Positive control: the renderer's action answers it.
    fireEvent.click(answer);
    await screen.findByText("output: picked in the UI", {}, WAIT);
    expect(screen.getByTestId("selection").dataset.state).toBe("done");
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      kind: "submit",
      input: { threadId, actionId: "call-sel", payload: { text: "picked in the UI" }, clientTools: [] },
    });
    expect(rendered).toContain("waiting");
  });

  it("for a frontend-defined tool: the definition is sent so the model can call it, and the call waits for the rendered UI", async () => {
    const {
      runtime,
      client: direct,
      threadId,
    } = await harness([
      {
        toolCalls: [
          { toolName: "client.confirm", input: { title: "Delete report.pdf?" }, toolCallId: "call-confirm" },
        ],
      },
      { text: "Deleted." },
    ]);
    const { client, calls } = recordingClient(direct);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    function ConfirmUi() {
      Main.useClientTool(
        {
          name: "client.confirm",
          description: "Ask the user to confirm an action",
          inputSchema: z.object({ title: z.string() }),
          outputSchema: z.object({ confirmed: z.boolean() }),
        },
        {
          render: ({ state, input, action, output }) => (
            <div data-testid="confirm" data-state={state}>
              {state === "waiting" ? (
                <button type="button" onClick={() => void action.submit({ confirmed: true })}>
                  confirm: {input.title}
                </button>
              ) : null}
              {state === "done" ? <span>confirmed: {String(output.confirmed)}</span> : null}
            </div>
          ),
        },
      );
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <ConfirmUi />
          <ThreadView label="main" />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send main"));
    const confirm = await screen.findByText("confirm: Delete report.pdf?", {}, WAIT);
    expect(screen.getByTestId("confirm").dataset.state).toBe("waiting");
    await runtime.waitForIdle(threadId);

    // The serializable definition went out with the request, and the model was offered the tool.
    const definition = {
      name: "client.confirm",
      description: "Ask the user to confirm an action",
      inputSchema: expect.objectContaining({
        type: "object",
        properties: { title: { type: "string" } },
        required: ["title"],
      }),
      outputSchema: expect.objectContaining({
        type: "object",
        properties: { confirmed: { type: "boolean" } },
      }),
    };
    expect((await runtime.lastRun(threadId))?.clientTools).toEqual([definition]);
    const model = runtime.model as unknown as { calls: Array<{ tools?: Array<{ name: string }> }> };
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toContain("client.confirm");

    // No automatic execution: nothing is submitted, cancelled or failed; the call keeps waiting.
    await quiet();
    expect(calls).toEqual([]);
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual(["client.confirm.output"]);
    expect(screen.getByTestId("confirm").dataset.state).toBe("waiting");

    // Positive control: the rendered UI answers it, carrying the definition again.
    fireEvent.click(confirm);
    await screen.findByText("confirmed: true", {}, WAIT);
    expect(screen.getByTestId("confirm").dataset.state).toBe("done");
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("Deleted."), WAIT);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      kind: "submit",
      input: { threadId, actionId: "call-confirm", payload: { confirmed: true }, clientTools: [definition] },
    });
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      type: "dynamic-tool",
      toolName: "client.confirm",
      state: "output-available",
      output: { confirmed: true },
    });
    expect(model.calls[1]?.tools?.map((tool) => tool.name)).toContain("client.confirm");
  });
});

describe("execute and render together (03:170)", () => {
  // The case where execute throws is covered by client-tools.test.tsx ("an execute that throws
  // leaves the action pending for a manual answer and reports the error"). This is the other way
  // automatic execution cannot answer: its result is rejected by the output schema.
  it("when the server rejects execute's output, the same waiting action stays for the renderer to complete", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const errors: Array<{ message: string; info: ClientToolErrorInfo }> = [];
    // Not a string: the output schema ({ text: string }) rejects it.
    const execute = vi.fn(async () => ({ text: 42 }) as unknown as { text: string });
    function Handler() {
      Main.useClientTool("getSelectedText", {
        execute,
        render: ({ state, action, output }) =>
          state === "waiting" ? (
            <button type="button" onClick={() => void action.submit({ text: "fixed by hand" })}>
              answer manually
            </button>
          ) : (
            <span>
              state {state}
              {state === "done" ? `: ${output.text}` : ""}
            </span>
          ),
      });
      return null;
    }
    render(
      <Pai.Provider
        client={client}
        onClientToolError={(error, info) => errors.push({ message: (error as Error).message, info })}
      >
        <ThreadProvider threadId={threadId}>
          <Handler />
          <ThreadView label="main" />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send main"));
    await waitFor(() => expect(errors).toHaveLength(1), WAIT);
    expect(errors[0]).toMatchObject({
      message: expect.stringContaining("invalid"),
      info: { threadId, toolName: "getSelectedText", actionId: "call-sel", phase: "submit" },
    });
    expect(execute).toHaveBeenCalledTimes(1);
    const manual = await screen.findByText("answer manually", {}, WAIT);
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    expect(await runtime.lastText(threadId)).toBe("");

    fireEvent.click(manual);
    await screen.findByText("state done: fixed by hand", {}, WAIT);
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(errors).toHaveLength(1);
  });
});
