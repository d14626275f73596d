// The growth table: PAI's share of one turn on threads of 10, 100 and 1000 messages.
import type { Pai } from "@pai/core";
import { internalsOf } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { convertToModelMessages, generateText, type ModelMessage, stepCountIs, type UIMessage } from "ai";
import { countingStorage } from "./counting-storage.ts";
import type { BenchEngine } from "./engines.ts";
import { bareAddTools, turnModel } from "./fixtures.ts";
import { formatMs, summarize } from "./harness.ts";
import { log, results } from "./report.ts";
import { identity, runtimeOn } from "./scenarios.ts";
import { shareGrowth } from "./targets.ts";

/** Seeds a thread with `count` messages by committing them directly (as a long history would be). */
export async function seedThread(pai: Pai, count: number): Promise<string> {
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
export async function seededHistory(count: number): Promise<ModelMessage[]> {
  const messages: UIMessage[] = Array.from({ length: count }, (_, index) => ({
    id: `seed-${index}`,
    role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
    parts: [{ type: "text" as const, text: `message ${index}: ${"lorem ipsum ".repeat(8)}` }],
  }));
  messages.push({ id: "ask", role: "user", parts: [{ type: "text", text: "1+2?" }] });
  return convertToModelMessages(messages);
}

/** How long `fn` took, in ms. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/**
 * One two-step turn on threads of N messages, in blocks. A block seeds fresh threads (20 of each
 * size) and gives each one unmeasured turn before any turn is measured: measured right after its
 * own seeding, a turn paid for collecting the garbage of writing 1,000 rows, and the table showed
 * that instead of the turn. Then rounds: each round takes one more turn on every thread, size
 * after size, and times the bare AI SDK call on a history of the same length next to each PAI
 * turn (before or after it, alternately), so both see the same heap and the same machine (timed
 * in a separate pass, the baseline ran hot and on another minute's CPU). PAI's own share is the
 * median of each turn's time minus its bare call's, over every block. A thread grows by two
 * messages a turn (the question and the answer): the 10-message threads end at 24. More turns per
 * thread would grow them further, and more threads at once would outnumber the model history's
 * per-thread record (64 threads); blocks of fresh threads give the median five times the pairs
 * without either.
 */
export async function benchGrowth(engines: BenchEngine[]) {
  const sizes = [10, 100, 1000];
  const threadsPerSize = 20;
  const turnsPerThread = 6;
  // Blocks of fresh threads. One block's 120 pairs left the memory engine's median at 1,000
  // messages swinging by ±40 µs between runs of the same build, on a share of about 0.1 ms:
  // each pair's difference carries the jitter of the SDK's own work on 1,000 messages (0.3 ms
  // between quartiles). Five blocks narrow the median's own error; twenty did not narrow the
  // spread between runs any further (bench/README.md, eighth pass).
  const blocks = 5;
  const bareModel = turnModel("add");
  // A history of its own for each thread the bare call stands beside, as an app on the bare SDK
  // keeps each conversation's messages. One shared history per size stayed in the CPU's caches
  // while PAI's turns walked twenty threads' messages, so the SDK's pass over 1,000 messages ran
  // faster on the bare side and its difference counted as PAI's (bench/README.md, ninth pass).
  const histories = new Map<number, ModelMessage[][]>();
  for (const size of sizes) {
    const list: ModelMessage[][] = [];
    for (let index = 0; index < threadsPerSize; index++) list.push(await seededHistory(size));
    histories.set(size, list);
  }
  const bareTurn = (size: number, index: number) =>
    generateText({
      model: bareModel,
      tools: bareAddTools,
      messages: histories.get(size)![index]!,
      stopWhen: stepCountIs(2),
    });
  // The bare call is cheap: it is warmed like the bench's other baselines before its first timing.
  const until = performance.now() + 3000;
  for (let index = 0; performance.now() < until; index = (index + 1) % threadsPerSize)
    for (const size of sizes) await bareTurn(size, index);
  log();
  log("### Growth: one two-step turn on a thread of N messages");
  log(
    "| engine   | messages | bare AI SDK ms | PAI median ms | PAI p95 ms | iters | PAI minus bare ms (paired) |            vs 10 msgs | bytes written/turn | commits/turn | storage calls/turn |",
  );
  log(
    "|----------|---------:|---------------:|--------------:|-----------:|------:|---------------------------:|----------------------:|-------------------:|-------------:|-------------------:|",
  );
  const growth: unknown[] = [];
  for (const engine of engines) {
    // Each block drives its threads with a runtime of its own and, on the memory engine, a
    // storage of its own: one storage for every block held 100,000 messages by the last, whose
    // collection ran during the timed turns (a server process holds the threads it serves, not
    // every thread it ever served).
    const open = () => {
      const counting = countingStorage(engine.name === "memory" ? memoryStorage() : engine.storage);
      const pai = runtimeOn(counting.storage, "add");
      const turn = async (threadId: string) => {
        await pai.service.threads.send({ identity, threadId, message: { text: "1+2?" } });
        await pai.waitForIdle(threadId);
      };
      return { counting, pai, turn };
    };
    // PAI is warmed like the bare call: 5 s of turns, on threads of each size that are not
    // measured (they grow as they go). Without it, a table run on its own measured PAI's code
    // before V8 had optimized it, and its loops over 1,000 messages ran in the interpreter.
    const warm = open();
    const warmThreads: string[] = [];
    for (const size of sizes) warmThreads.push(await seedThread(warm.pai, size));
    const warmUntil = performance.now() + 5000;
    while (performance.now() < warmUntil) for (const threadId of warmThreads) await warm.turn(threadId);
    await warm.pai.close();
    const samples = new Map(sizes.map((size) => [size, [] as number[]]));
    const bareSamples = new Map(sizes.map((size) => [size, [] as number[]]));
    const counted = new Map(sizes.map((size) => [size, { bytes: 0, commits: 0, calls: 0 }]));
    for (let block = 0; block < blocks; block++) {
      const { counting, pai, turn } = open();
      const threads = new Map<number, string[]>(sizes.map((size) => [size, []]));
      for (let index = 0; index < threadsPerSize; index++) {
        for (const size of sizes) {
          const threadId = await seedThread(pai, size);
          await turn(threadId);
          threads.get(size)!.push(threadId);
        }
      }
      // The timed rounds start on a collected heap, not inside the collection of the seeding.
      (globalThis as { gc?: () => void }).gc?.();
      for (let round = 0; round < turnsPerThread; round++) {
        // A size's turns go one after another, each pair's PAI turn and bare call in alternating
        // order, so both are preceded by work on a thread of the same size and each pays for the
        // other's garbage as often. Sizes taking turns thread by thread (even in a rotating
        // order) put every 10-message turn right after a 1,000-message bare call: its share paid
        // for that call's garbage, and the table read PAI's growth about half as large as it is
        // (bench/README.md, ninth pass).
        const order = sizes.map((_, at) => sizes[(at + round) % sizes.length]!);
        for (const size of order) {
          for (let index = 0; index < threadsPerSize; index++) {
            const bareFirst = (index + round) % 2 === 1;
            let bareMs = bareFirst ? await timed(() => bareTurn(size, index)) : 0;
            const before = { ...counting.counters };
            samples.get(size)!.push(await timed(() => turn(threads.get(size)![index]!)));
            const count = counted.get(size)!;
            count.bytes += counting.counters.bytesWritten - before.bytesWritten;
            count.commits += counting.counters.commits - before.commits;
            count.calls += counting.counters.calls - before.calls;
            if (!bareFirst) bareMs = await timed(() => bareTurn(size, index));
            bareSamples.get(size)!.push(bareMs);
          }
        }
      }
      await pai.close();
    }
    const turns = blocks * threadsPerSize * turnsPerThread;
    let ownAt10 = Number.NaN;
    for (const size of sizes) {
      const measurement = summarize(`${engine.name} ${size}`, samples.get(size)!);
      const count = counted.get(size)!;
      const perTurn = {
        bytes: Math.round(count.bytes / turns),
        commits: count.commits / turns,
        calls: count.calls / turns,
      };
      const bareMs = summarize(`bare ${size}`, bareSamples.get(size)!).medianMs;
      // Each PAI turn minus the bare call timed right after it: the pair shares the machine's
      // speed of that moment, which the difference of the two medians did not.
      const bare = bareSamples.get(size)!;
      const own = summarize(
        `own ${size}`,
        samples.get(size)!.map((ms, index) => ms - bare[index]!),
      ).medianMs;
      if (size === sizes[0]) ownAt10 = own;
      const change = shareChange(own, ownAt10);
      log(
        `| ${engine.name.padEnd(8)} | ${String(size).padStart(8)} | ${formatMs(bareMs).padStart(14)} | ${formatMs(measurement.medianMs).padStart(13)} | ${formatMs(measurement.p95Ms).padStart(10)} | ${String(measurement.iterations).padStart(5)} | ${formatMs(own).padStart(26)} | ${change.padStart(21)} | ${String(perTurn.bytes).padStart(18)} | ${perTurn.commits.toFixed(1).padStart(12)} | ${perTurn.calls.toFixed(1).padStart(18)} |`,
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
  }
  results.growth = growth;
  return growth;
}

/**
 * PAI's share against its share at 10 messages: in percent, and in milliseconds, because a share
 * of a few tens of microseconds makes the percentage swing with noise (and a share at or below
 * zero gives it no meaning at all).
 */
function shareChange(own: number, ownAt10: number): string {
  const delta = own - ownAt10;
  const ms = `${delta >= 0 ? "+" : "-"}${Math.abs(delta).toFixed(3)} ms`;
  if (own === ownAt10) return `+0% (${ms})`;
  const growth = shareGrowth(own, ownAt10);
  if (growth === undefined) return `n/a (${ms})`;
  const percent = growth * 100;
  return `${percent >= 0 ? "+" : ""}${percent.toFixed(0)}% (${ms})`;
}
