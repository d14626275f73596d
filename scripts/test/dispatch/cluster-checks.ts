/**
 * What the dispatch cluster test checks a run's outcome with: a thread against the script, the
 * spans in which each process drove a run, and overlaps between them.
 */
import { INTERRUPTED_TEXT, type ThreadSnapshot } from "@pai/core";
import { type Kysely, sql } from "kysely";
import type { ClusterProcess } from "./cluster-process.ts";
import { callingText, doneText, type MarkerRow, runMessage } from "./fixtures/cluster-agent.ts";

export type Interval = {
  instanceId: string;
  runId: string;
  what: string;
  start: number;
  end: number;
  open: boolean;
};

export type ToolPart = { type: string; toolCallId: string; state: string; output?: any; errorText?: string };
export type Part = { type: string; text?: string } & Partial<ToolPart>;

/** What storage says about a run's messages, tool call and effect, against the script. */
export function checkThread(snapshot: ThreadSnapshot, token: string, markers: MarkerRow[]): string[] {
  const problems: string[] = [];
  if (snapshot.runs.length !== 1) problems.push(`${snapshot.runs.length} runs`);
  const run = snapshot.runs[0];
  if (run && run.status !== "completed")
    problems.push(`run ${run.runId} is ${run.status} (${run.error ?? ""})`);
  if (run && run.step !== 2) problems.push(`run ${run.runId} committed ${run.step} model steps, not 2`);
  const parts = snapshot.messages.flatMap((row) =>
    (row.message.parts as Part[]).map((part) => ({ role: row.role, part })),
  );
  const texts = (text: string) =>
    parts.filter(({ part }) => part.type === "text" && part.text === text).length;
  const users = snapshot.messages.filter((row) => row.role === "user");
  if (users.length !== 1 || texts(runMessage(token)) !== 1) problems.push(`user messages: ${users.length}`);
  if (texts(callingText(token)) !== 1)
    problems.push(`first step text appears ${texts(callingText(token))} times`);
  if (texts(doneText(token)) !== 1) problems.push(`final text appears ${texts(doneText(token))} times`);
  const otherTexts = parts.filter(
    ({ part }) =>
      part.type === "text" &&
      ![runMessage(token), callingText(token), doneText(token)].includes(part.text ?? ""),
  );
  if (otherTexts.length > 0) problems.push(`unexpected texts ${JSON.stringify(otherTexts)}`);
  const tools = toolParts(snapshot);
  if (tools.length !== 1) problems.push(`${tools.length} tool parts`);
  const tool = tools[0];
  for (const marker of markers) {
    if (marker.tool_call_id !== tool?.toolCallId) {
      problems.push(`the tool ran for call ${marker.tool_call_id}, which is not in the thread`);
    }
  }
  if (tool) {
    const ran = markers.filter((marker) => marker.tool_call_id === tool.toolCallId);
    if (tool.state === "output-available") {
      if (ran.length !== 1 || tool.output?.by !== ran[0]!.instance || tool.output?.token !== token) {
        problems.push(`output ${JSON.stringify(tool.output)} vs executions ${JSON.stringify(ran)}`);
      }
    } else if (tool.state === "output-error") {
      if (tool.errorText !== INTERRUPTED_TEXT) problems.push(`tool failed: ${tool.errorText}`);
      if (ran.length > 1) problems.push(`interrupted call executed ${ran.length} times`);
    } else {
      problems.push(`tool call left ${tool.state}`);
    }
  }
  return problems;
}

export function toolParts(snapshot: ThreadSnapshot): ToolPart[] {
  return snapshot.messages.flatMap((row) =>
    (row.message.parts as Part[]).filter(
      (part): part is Part & ToolPart => part.type.startsWith("tool-") || part.type === "dynamic-tool",
    ),
  );
}

/**
 * The spans in which a process worked on a run: each model step (step-start to step-end) and each
 * tool execution (tool-start to tool-end). A span a SIGKILL cut short ends at the kill.
 */
export function activity(child: ClusterProcess): Interval[] {
  const open = new Map<string, Interval>();
  const done: Interval[] = [];
  for (const event of child.events) {
    if (event.kind !== "rt") continue;
    const key =
      event.event === "step-start" || event.event === "step-end"
        ? `${event.runId} step ${event.step}`
        : event.event === "tool-start" || event.event === "tool-end"
          ? `${event.runId} tool ${event.toolCallId}`
          : null;
    if (!key) continue;
    if (event.event.endsWith("-start")) {
      open.set(key, {
        instanceId: child.instanceId,
        runId: event.runId,
        what: key.slice(event.runId.length + 1),
        start: event.at,
        end: Number.POSITIVE_INFINITY,
        open: true,
      });
    } else {
      const interval = open.get(key);
      open.delete(key);
      if (interval) done.push({ ...interval, end: event.at, open: false });
    }
  }
  const end = child.endedAt ?? Date.now();
  return [...done, ...[...open.values()].map((interval) => ({ ...interval, end }))];
}

export function findOverlaps(intervals: Interval[]): Array<[Interval, Interval]> {
  const byRun = new Map<string, Interval[]>();
  for (const interval of intervals)
    byRun.set(interval.runId, [...(byRun.get(interval.runId) ?? []), interval]);
  const overlaps: Array<[Interval, Interval]> = [];
  for (const list of byRun.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length && list[j]!.start < list[i]!.end; j++) {
        if (list[j]!.instanceId !== list[i]!.instanceId) overlaps.push([list[i]!, list[j]!]);
      }
    }
  }
  return overlaps;
}

/** For a failure message: the runs that did not end, and what the processes last said about them. */
export async function describeStuckRuns(db: Kysely<any>, runsTable: string, processes: ClusterProcess[]) {
  const rows = await sql<{
    thread_id: string;
    run_id: string;
    status: string;
    lease_owner: string | null;
    lease_expires_at: string | null;
  }>`select thread_id, run_id, status, lease_owner, lease_expires_at from ${sql.table(
    runsTable,
  )} where status not in ('completed', 'failed', 'cancelled') order by thread_id limit 5`.execute(db);
  return rows.rows.map((row) => {
    const seen = processes.flatMap((child) =>
      child.events
        .filter(
          (event) =>
            event.runId === row.run_id || event.threadId === row.thread_id || event.job?.runId === row.run_id,
        )
        .map(
          (event) =>
            `${child.instanceId}${child.killedAt ? "(killed)" : ""}@${event.at}:${event.kind}${event.event ? `/${event.event}` : ""}${event.message ? `(${event.message})` : ""}`,
        ),
    );
    return `stuck: ${JSON.stringify(row)} (now ${new Date().toISOString()}); events: ${seen.slice(-40).join(", ")}`;
  });
}
