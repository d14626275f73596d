// The growth table: PAI's share of one turn on threads of 10, 100 and 1000 messages.
import type { Pai } from "@pai/core";
import { internalsOf } from "@pai/core/testing";
import { convertToModelMessages, generateText, type ModelMessage, stepCountIs, type UIMessage } from "ai";
import { countingStorage } from "./counting-storage.ts";
import type { BenchEngine } from "./engines.ts";
import { bareAddTools, turnModel } from "./fixtures.ts";
import { formatMs, type Measurement, measure, summarize } from "./harness.ts";
import { log, results } from "./report.ts";
import { identity, runtimeOn } from "./scenarios.ts";

/** Seeds a thread with `count` messages by committing them directly (as a long history would be). */
async function seedThread(pai: Pai, count: number): Promise<string> {
  const thread = await pai.service.threads.create({ identity });
  const storage = internalsOf(pai).store.storage;
  let version = thread.version;
  const now = new Date().toISOString();
  const batch = 50;
  for (let start = 0; start < count; start += batch) {
    const events = [];
    for (let index = start; index < Math.min(count, start + batch); index++) {
      const role = index % 2 === 0 ? "user" : "assistant";
      const messageId = `seed-${index}`;
      events.push({
        type: "message-upserted" as const,
        message: {
          threadId: thread.threadId,
          messageId,
          position: index + 1,
          role: role as "user" | "assistant",
          message: {
            id: messageId,
            role: role as "user" | "assistant",
            parts: [{ type: "text" as const, text: `message ${index}: ${"lorem ipsum ".repeat(8)}` }],
          },
          runId: null,
          createdAt: now,
          updatedAt: now,
        },
      });
    }
    const result = await storage.commit({ threadId: thread.threadId, expectedVersion: version, events, now });
    if (!result.ok) throw new Error("bench: seeding conflicted");
    version = result.version;
  }
  return thread.threadId;
}

/**
 * The history `seedThread` writes, converted by the AI SDK exactly as PAI converts it, so the
 * bare baseline's model calls process the same prompt shape PAI's do.
 */
async function seededHistory(count: number): Promise<ModelMessage[]> {
  const messages: UIMessage[] = Array.from({ length: count }, (_, index) => ({
    id: `seed-${index}`,
    role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
    parts: [{ type: "text" as const, text: `message ${index}: ${"lorem ipsum ".repeat(8)}` }],
  }));
  messages.push({ id: "ask", role: "user", parts: [{ type: "text", text: "1+2?" }] });
  return convertToModelMessages(messages);
}

/**
 * One two-step turn on threads of N messages (how each turn is set up is said where it is
 * measured). The bare AI SDK gets the same N-message history, since its own per-call cost also
 * grows with the prompt.
 */
export async function benchGrowth(engines: BenchEngine[]) {
  const sizes = [10, 100, 1000];
  const threadsPerSize = 30;
  const bareModel = turnModel("add");
  const bareTools = bareAddTools;
  const bare = new Map<number, Measurement>();
  for (const size of sizes) {
    const messages = await seededHistory(size);
    const [measurement] = await measure([
      {
        name: `bare ${size}`,
        fn: async () =>
          generateText({ model: bareModel, tools: bareTools, messages, stopWhen: stepCountIs(2) }),
      },
    ]);
    bare.set(size, measurement!);
  }
  log();
  log("### Growth: one two-step turn on a thread of N messages");
  log(
    "| engine   | messages | bare AI SDK ms | PAI median ms | PAI p95 ms | iters | PAI minus bare ms | vs 10 msgs | bytes written/turn | commits/turn | storage calls/turn |",
  );
  log(
    "|----------|---------:|---------------:|--------------:|-----------:|------:|------------------:|-----------:|-------------------:|-------------:|-------------------:|",
  );
  const growth: unknown[] = [];
  for (const engine of engines) {
    const counting = countingStorage(engine.storage);
    const pai = runtimeOn(counting.storage, "add");
    const turn = async (threadId: string) => {
      await pai.service.threads.send({ identity, threadId, message: { text: "1+2?" } });
      await pai.waitForIdle(threadId);
    };
    const samples = new Map(sizes.map((size) => [size, [] as number[]]));
    const counted = new Map(sizes.map((size) => [size, { bytes: 0, commits: 0, calls: 0 }]));
    // Sizes take turns, round after round, so each size is measured with the code equally warm
    // (measured one size after another, the first one ran on code the JIT had not optimized yet).
    // Each measured turn runs on its own freshly seeded thread, after one unmeasured turn on it:
    // the realistic case is the next turn of a conversation, and reusing a thread would measure a
    // growing one.
    for (let round = 0; round < threadsPerSize; round++) {
      for (const size of sizes) {
        const threadId = await seedThread(pai, size);
        await turn(threadId);
        const before = { ...counting.counters };
        const started = performance.now();
        await turn(threadId);
        samples.get(size)!.push(performance.now() - started);
        const count = counted.get(size)!;
        count.bytes += counting.counters.bytesWritten - before.bytesWritten;
        count.commits += counting.counters.commits - before.commits;
        count.calls += counting.counters.calls - before.calls;
      }
    }
    let ownAt10 = Number.NaN;
    for (const size of sizes) {
      const measurement = summarize(`${engine.name} ${size}`, samples.get(size)!);
      const count = counted.get(size)!;
      const perTurn = {
        bytes: Math.round(count.bytes / threadsPerSize),
        commits: count.commits / threadsPerSize,
        calls: count.calls / threadsPerSize,
      };
      const bareMs = bare.get(size)!.medianMs;
      const own = measurement.medianMs - bareMs;
      if (size === sizes[0]) ownAt10 = own;
      const change = `${own >= ownAt10 ? "+" : ""}${(((own - ownAt10) / ownAt10) * 100).toFixed(0)}%`;
      log(
        `| ${engine.name.padEnd(8)} | ${String(size).padStart(8)} | ${formatMs(bareMs).padStart(14)} | ${formatMs(measurement.medianMs).padStart(13)} | ${formatMs(measurement.p95Ms).padStart(10)} | ${String(measurement.iterations).padStart(5)} | ${formatMs(own).padStart(17)} | ${change.padStart(10)} | ${String(perTurn.bytes).padStart(18)} | ${perTurn.commits.toFixed(1).padStart(12)} | ${perTurn.calls.toFixed(1).padStart(18)} |`,
      );
      growth.push({
        engine: engine.name,
        messages: size,
        bareMedianMs: bareMs,
        ...measurement,
        ownMs: own,
        ...perTurn,
      });
    }
    await pai.close();
  }
  results.growth = growth;
  return growth;
}
