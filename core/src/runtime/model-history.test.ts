import { convertToModelMessages, type ToolSet, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { MessageRow } from "../state/rows.js";
import { applyThreadEvent, type ThreadSnapshot } from "../state/snapshot.js";
import { ModelHistory } from "./model-history.js";

/** Stored rows of one thread, as a snapshot holds them. */
const rows = (messages: UIMessage[]) => messages.map((message) => ({ message }));

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

/** An assistant message of two steps: a tool call with its output, then text. */
const assistant = (id: string, output: unknown, state = "output-available"): UIMessage =>
  ({
    id,
    role: "assistant",
    parts: [
      { type: "step-start" },
      {
        type: "tool-lookup",
        toolCallId: `${id}-call`,
        state,
        input: { q: id },
        ...(state === "output-error" ? { errorText: "boom" } : { output }),
      },
      { type: "step-start" },
      { type: "text", text: `answer ${id}`, state: "done" },
    ],
  }) as UIMessage;

function toolsCounting() {
  const counter = { calls: 0 };
  const tools = {
    lookup: {
      inputSchema: z.object({ q: z.string() }),
      toModelOutput: ({ output }: { output: unknown }) => {
        counter.calls++;
        return { type: "text", value: `found ${JSON.stringify(output)}` };
      },
    },
  } as unknown as ToolSet;
  return { tools, counter };
}

describe("ModelHistory", () => {
  it("gives what converting the whole history at once gives", async () => {
    const { tools } = toolsCounting();
    const messages = [
      user("u1", "hi"),
      assistant("a1", { rows: 1 }),
      user("u2", "more"),
      assistant("a2", null, "output-error"),
      user("u3", "thanks"),
    ];
    const history = new ModelHistory();
    expect(await history.convert({}, "t1", rows(messages), tools)).toEqual(
      await convertToModelMessages(messages, { tools }),
    );
  });

  it("converts a stored message once; a replaced message object is converted again", async () => {
    const { tools, counter } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const messages = [user("u1", "hi"), assistant("a1", 1), user("u2", "again"), assistant("a2", 2)];
    await history.convert(agent, "t1", rows(messages), tools);
    expect(counter.calls).toBe(2);
    const tail = assistant("a2", 3);
    const next = await history.convert(agent, "t1", rows([...messages.slice(0, 3), tail]), tools);
    expect(counter.calls).toBe(3);
    expect(next).toEqual(await convertToModelMessages([...messages.slice(0, 3), tail], { tools }));
  });

  it("falls back to whole-history conversion when SDK approval requests are present", async () => {
    const { tools } = toolsCounting();
    const pending = {
      id: "a0",
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "tool-lookup",
          toolCallId: "c0",
          state: "approval-requested",
          input: { q: "x" },
          approval: { id: "ap0" },
        },
      ],
    } as UIMessage;
    const messages = [user("u1", "hi"), pending, user("u2", "never mind")];
    const history = new ModelHistory();
    expect(await history.convert({}, "t1", rows(messages), tools)).toEqual(
      await convertToModelMessages(messages, { tools }),
    );
  });

  it("reuses the previous conversion's shared start, and stays right when histories interleave", async () => {
    const { tools } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const whole = (messages: UIMessage[]) => convertToModelMessages(messages, { tools });
    const first = [user("u1", "hi"), assistant("a1", 1), user("u2", "again")];
    const other = [user("x1", "other thread"), assistant("x2", 9)];
    const out = await history.convert(agent, "t1", rows(first), tools);
    expect(out).toEqual(await whole(first));
    // The caller's array is its own: changing it does not change the next conversion.
    out.length = 0;
    const grown = [...first, assistant("a2", 2)];
    expect(await history.convert(agent, "t1", rows(grown), tools)).toEqual(await whole(grown));
    expect(await history.convert(agent, "t2", rows(other), tools)).toEqual(await whole(other));
    // The same thread id with an unrelated history (nothing shared) converts it whole.
    expect(await history.convert(agent, "t1", rows(other), tools)).toEqual(await whole(other));
    expect(await history.convert(agent, "t1", rows(grown), tools)).toEqual(await whole(grown));
    // Back on the first thread with its tail replaced and a message inserted before it.
    const replaced = [first[0]!, first[1]!, user("u1b", "inserted"), first[2]!, assistant("a2", 3)];
    expect(await history.convert(agent, "t1", rows(replaced), tools)).toEqual(await whole(replaced));
    // A shorter history than the last one (messages removed) converts right too.
    expect(await history.convert(agent, "t1", rows(replaced.slice(0, 2)), tools)).toEqual(
      await whole(replaced.slice(0, 2)),
    );
  });

  it("keeps each thread's last conversion, so interleaved threads convert only their tails", async () => {
    const { tools, counter } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const long = Array.from({ length: 200 }, (_, index) =>
      index % 2 === 0 ? user(`u${index}`, `q${index}`) : assistant(`a${index}`, index),
    );
    const short = [user("s1", "hi")];
    // A snapshot keeps its row objects when a commit adds a row, as these rows do.
    const longRows = rows(long);
    await history.convert(agent, "long", longRows, tools);
    await history.convert(agent, "short", rows(short), tools);
    const grown = [...long, assistant("a-next", "next")];
    counter.calls = 0;
    const out = await history.convert(agent, "long", [...longRows, ...rows(grown.slice(-1))], tools);
    // Only the new message is converted.
    expect(counter.calls).toBe(1);
    expect(out).toEqual(await convertToModelMessages(grown, { tools }));
  });

  it("stays right when two steps of one thread convert at the same time", async () => {
    const { tools } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const base = [user("u1", "hi"), assistant("a1", 1)];
    await history.convert(agent, "t", rows(base), tools);
    const left = [...base, user("u2", "left")];
    const right = [base[0]!, assistant("a1", 2), user("u3", "right")];
    const [leftOut, rightOut] = await Promise.all([
      history.convert(agent, "t", rows(left), tools),
      history.convert(agent, "t", rows(right), tools),
    ]);
    expect(leftOut).toEqual(await convertToModelMessages(left, { tools }));
    expect(rightOut).toEqual(await convertToModelMessages(right, { tools }));
    expect(await history.convert(agent, "t", rows(left), tools)).toEqual(
      await convertToModelMessages(left, { tools }),
    );
  });

  it("a thread that gave way to newer ones is converted whole, and right", async () => {
    const { tools, counter } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const messages = [user("u1", "hi"), assistant("a1", 1), user("u2", "again")];
    await history.convert(agent, "t", rows(messages), tools);
    expect(history.size).toBe(1);
    const other = [user("o1", "other")];
    for (let index = 0; index < ModelHistory.MAX_THREADS; index++)
      await history.convert(agent, `other-${index}`, rows(other), tools);
    expect(history.size).toBe(ModelHistory.MAX_THREADS);
    counter.calls = 0;
    const out = await history.convert(agent, "t", rows(messages), tools);
    expect(counter.calls).toBe(1);
    expect(out).toEqual(await convertToModelMessages(messages, { tools }));
  });

  it("converts only what upserts changed in a list the snapshot made from the last one", async () => {
    const { tools, counter } = toolsCounting();
    const agent = {};
    const history = new ModelHistory();
    const row = (message: UIMessage, position: number) =>
      ({
        threadId: "t",
        messageId: message.id,
        position,
        role: message.role,
        message,
      }) as unknown as MessageRow;
    const messages = Array.from({ length: 50 }, (_, index) =>
      index % 2 === 0 ? user(`u${index}`, `q${index}`) : assistant(`a${index}`, index),
    );
    const first = messages.map((message, index) => row(message, index + 1));
    const base = {
      thread: {},
      messages: first,
      runs: [],
      actions: [],
      toolData: [],
    } as unknown as ThreadSnapshot;
    await history.convert(agent, "t", first, tools);
    // A step appends a message, then answers it; an earlier answer is replaced as well.
    const asked = user("u50", "and now?");
    const appended = applyThreadEvent(base, { type: "message-upserted", message: row(asked, 51) });
    const answered = applyThreadEvent(appended, {
      type: "message-upserted",
      message: row(assistant("a51", 51), 52),
    });
    const edited = applyThreadEvent(answered, {
      type: "message-upserted",
      message: row(assistant("a47", 470), 48),
    });
    counter.calls = 0;
    const out = await history.convert(agent, "t", edited.messages, tools);
    // The replaced answer and the new one; the rows after the replaced one keep their conversion.
    expect(counter.calls).toBe(2);
    const expected = [...messages, asked, assistant("a51", 51)];
    expected[47] = assistant("a47", 470);
    expect(out).toEqual(await convertToModelMessages(expected, { tools }));
    // A list it did not make (read again from storage: new row and message objects) converts the same.
    const reread = edited.messages.map((stored) => ({ message: structuredClone(stored.message) }));
    expect(await history.convert(agent, "t", reread, tools)).toEqual(out);
  });
});
