import { randomUUID } from "node:crypto";
import type { Fixture, TenantThread } from "./fixture.js";
import {
  mutationRawReq,
  mutationReq,
  type Outcome,
  queryRawReq,
  queryReq,
  type RawRequest,
  rawJson,
  type SendOptions,
  subscriptionRawReq,
  subscriptionReq,
  wrapJson,
} from "./raw-http.js";

/**
 * The hostile-tenant catalogue: every PAI procedure attacked by tenant B with tenant A's ids,
 * deep / wide / huge / prototype-keyed JSON, out-of-range integers, wrong types, malformed
 * bodies and superjson meta tricks. Cases are static (the list is known when the suite is
 * collected); the ids they use are read from the fixture when each case runs.
 */

export const PROCEDURES = {
  manifest: "query",
  "threads.create": "mutation",
  "threads.list": "query",
  "threads.get": "query",
  "threads.send": "mutation",
  "threads.cancel": "mutation",
  "threads.watch": "subscription",
  "threads.snapshot": "query",
  "threads.events": "subscription",
  "actions.list": "query",
  "actions.submit": "mutation",
  "actions.cancel": "mutation",
  "actions.fail": "mutation",
  "files.upload": "mutation",
  "files.get": "query",
} as const;

export type ProcedureName = keyof typeof PROCEDURES;

export type CaseContext = {
  fx: Fixture;
  /** Tenant A's thread (with its two pending actions), file and message ids. */
  a: Fixture["a"];
  /** B's own thread with two pending actions. */
  b: TenantThread;
  asB(request: RawRequest, options?: SendOptions): Promise<Outcome>;
};

export type Expectation =
  /** A 4xx; `status` pins it, `mentions` must all appear in the message. */
  | { kind: "refused"; status?: number; mentions?: Array<string | RegExp> }
  /** A legitimate call: 2xx (and still no leak, no change to A). */
  | { kind: "accepted" }
  /**
   * Id oracle: the outcomes for A's ids and for fresh ids must be indistinguishable (same
   * status, code and message once the ids are blanked). Refusals must have `refusedStatus`
   * when given; `mayAccept` allows both to succeed.
   */
  | { kind: "oracle"; refusedStatus?: number; mayAccept?: boolean };

export type CaseResult = {
  outcomes: Outcome[];
  /** Ids blanked before outcomes of an oracle case are compared. */
  ids?: string[];
};

export type HostileCase = {
  procedure: ProcedureName;
  attack: string;
  expect: Expectation;
  /** Threads B may legitimately gain in this case (a legitimate create). */
  newBobThreads?: number;
  run(ctx: CaseContext): Promise<CaseResult>;
};

// ---------------------------------------------------------------------------------------------
// Hostile values, as JSON text

const MB5 = 5 * 1024 * 1024;

/** Objects nested `depth` deep: {"a":{"a":…1…}}. */
export const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
/** Arrays nested `depth` deep (compact enough for a URL): [[[…1…]]]. */
export const deepArray = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

let wideCache: string | null = null;
/** One object with 100,000 keys. */
export function wideObject(): string {
  wideCache ??= `{${Array.from({ length: 100_000 }, (_, index) => `"k${index}":0`).join(",")}}`;
  return wideCache;
}

let hugeCache: string | null = null;
/** A 5 MiB string. */
export function hugeString(): string {
  hugeCache ??= "x".repeat(MB5);
  return hugeCache;
}

const PROTO_KEYS = ["__proto__", "constructor", "prototype"] as const;
/** An object whose own key is `key` (only writable as JSON text for `__proto__`). */
/**
 * An object whose own key is `key` (only writable as JSON text for `__proto__`), after `fields`
 * (JSON members that make the object otherwise valid where it goes, so the key is its only fault).
 */
const protoObject = (key: (typeof PROTO_KEYS)[number], fields = "") => {
  const before = fields ? `${fields},` : "";
  return key === "constructor"
    ? `{${before}"constructor":{"prototype":{"polluted":"yes"}}}`
    : `{${before}"${key}":{"polluted":"yes"}}`;
};

export const freshId = () => randomUUID();
export const freshFileId = () => `file_${randomUUID().replaceAll("-", "")}`;

// ---------------------------------------------------------------------------------------------
// Requests by procedure kind

const pathOf = (procedure: ProcedureName) => `pai.${procedure}`;

/** A well-formed call of the procedure with `input`. */
export function call(procedure: ProcedureName, input: unknown, headers?: Record<string, string>): RawRequest {
  const path = pathOf(procedure);
  switch (PROCEDURES[procedure]) {
    case "query":
      return queryReq(path, input);
    case "mutation":
      return mutationReq(path, input);
    case "subscription":
      return subscriptionReq(path, input, headers);
  }
}

/** A call whose superjson payload (`{"json": …}`) is the given text, verbatim. */
export function callRaw(procedure: ProcedureName, payloadText: string): RawRequest {
  const path = pathOf(procedure);
  switch (PROCEDURES[procedure]) {
    case "query":
      return queryRawReq(path, payloadText);
    case "mutation":
      return mutationRawReq(path, payloadText);
    case "subscription":
      return subscriptionRawReq(path, payloadText);
  }
}

function setPath(target: Record<string, unknown>, path: Array<string | number>, value: unknown) {
  let current: any = target;
  for (const [index, segment] of path.slice(0, -1).entries()) {
    if (current[segment] === undefined) current[segment] = typeof path[index + 1] === "number" ? [] : {};
    current = current[segment];
  }
  current[path.at(-1)!] = value;
}

/** `base` with the raw JSON text `insert` at `path`, as a full superjson payload text. */
function withRaw(base: Record<string, unknown>, path: Array<string | number>, insert: string): string {
  const copy = structuredClone(base);
  setPath(copy, path, "@@INSERT@@");
  return wrapJson(rawJson(copy, { INSERT: insert }));
}

function withValue(base: Record<string, unknown>, path: Array<string | number>, value: unknown) {
  const copy = structuredClone(base);
  setPath(copy, path, value);
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Per-procedure specs: a valid input of B's own, where JSON goes, which strings to blow up

type Slot = {
  /** How a path-naming message refers to it (the last key of the path). */
  name: string;
  path: Array<string | number>;
  /** A JSON value slot of the API (metadata, clientData, payload, schemas): its message must name the path and the limit. */
  declaredJson: boolean;
  /** JSON members that make an object valid in this slot (prototype-key cases add the key to them). */
  fields?: string;
};

type Spec = {
  base(ctx: CaseContext): Record<string, unknown>;
  slots: Slot[];
  /** String fields: first one also gets wrong-type attacks. */
  strings: Array<Array<string | number>>;
  /** Without input the call is refused (otherwise it is a legitimate default call). */
  requiresInput: boolean;
};

const clientTool = { name: "pick", description: "Pick one", inputSchema: { type: "object" } };

const SPECS: Record<ProcedureName, Spec> = {
  manifest: { base: () => ({ agentId: "main" }), slots: [], strings: [["agentId"]], requiresInput: false },
  "threads.create": {
    base: () => ({ title: "bob's new thread" }),
    slots: [{ name: "metadata", path: ["metadata"], declaredJson: true }],
    strings: [["title"], ["agentId"]],
    requiresInput: false,
  },
  "threads.list": { base: () => ({ limit: 10 }), slots: [], strings: [["cursor"]], requiresInput: false },
  "threads.get": {
    base: ({ b }) => ({ threadId: b.threadId }),
    slots: [],
    strings: [["threadId"]],
    requiresInput: true,
  },
  "threads.send": {
    base: ({ b }) => ({
      threadId: b.threadId,
      message: { parts: [{ type: "text", text: "hello" }] },
      clientTools: [structuredClone(clientTool)],
    }),
    slots: [
      { name: "clientData", path: ["clientData"], declaredJson: true },
      {
        name: "inputSchema",
        path: ["clientTools", 0, "inputSchema"],
        declaredJson: true,
        fields: '"type":"object"',
      },
      {
        name: "outputSchema",
        path: ["clientTools", 0, "outputSchema"],
        declaredJson: true,
        fields: '"type":"object"',
      },
      {
        name: "parts",
        path: ["message", "parts", 0],
        declaredJson: false,
        fields: '"type":"text","text":"hello"',
      },
    ],
    strings: [["message", "parts", 0, "text"], ["threadId"]],
    requiresInput: true,
  },
  "threads.cancel": {
    base: ({ b }) => ({ threadId: b.threadId, reason: "stop" }),
    slots: [],
    strings: [["reason"], ["threadId"]],
    requiresInput: true,
  },
  "threads.watch": {
    base: ({ b }) => ({ threadId: b.threadId }),
    slots: [],
    strings: [["threadId"]],
    requiresInput: true,
  },
  "threads.snapshot": {
    base: ({ b }) => ({ threadId: b.threadId }),
    slots: [],
    strings: [["threadId"]],
    requiresInput: true,
  },
  "threads.events": {
    base: ({ b }) => ({ threadId: b.threadId }),
    slots: [],
    strings: [["threadId"]],
    requiresInput: true,
  },
  "actions.list": {
    base: () => ({ state: "pending", limit: 10 }),
    slots: [],
    strings: [["cursor"]],
    requiresInput: false,
  },
  "actions.submit": {
    base: ({ b }) => ({
      threadId: b.threadId,
      actionId: b.approvalId,
      payload: { approved: true },
      clientTools: [structuredClone(clientTool)],
    }),
    slots: [
      { name: "payload", path: ["payload"], declaredJson: true, fields: '"approved":true' },
      { name: "clientData", path: ["clientData"], declaredJson: true },
      {
        name: "inputSchema",
        path: ["clientTools", 0, "inputSchema"],
        declaredJson: true,
        fields: '"type":"object"',
      },
    ],
    strings: [["idempotencyKey"], ["actionId"]],
    requiresInput: true,
  },
  "actions.cancel": {
    base: ({ b }) => ({ threadId: b.threadId, actionId: b.approvalId, reason: "no" }),
    slots: [],
    strings: [["reason"], ["actionId"]],
    requiresInput: true,
  },
  "actions.fail": {
    base: ({ b }) => ({ threadId: b.threadId, actionId: b.outputId, error: "broken" }),
    slots: [{ name: "error", path: ["error"], declaredJson: false, fields: '"message":"broken"' }],
    strings: [["error"], ["actionId"]],
    requiresInput: true,
  },
  "files.upload": {
    base: () => ({ filename: "bob.txt", mediaType: "text/plain", body: "aGk=", metadata: {} }),
    slots: [{ name: "metadata", path: ["metadata"], declaredJson: true }],
    strings: [["filename"], ["mediaType"]],
    requiresInput: true,
  },
  "files.get": {
    base: () => ({ fileId: freshFileId() }),
    slots: [],
    strings: [["fileId"]],
    requiresInput: true,
  },
};

const names = Object.keys(PROCEDURES) as ProcedureName[];
const isGet = (procedure: ProcedureName) => PROCEDURES[procedure] !== "mutation";
const single = (outcome: Outcome): CaseResult => ({ outcomes: [outcome] });
const label = (path: Array<string | number>) =>
  path
    .map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`))
    .join("")
    .slice(1);

// ---------------------------------------------------------------------------------------------
// Families

/** A's ids against fresh ones: every answer must be the one for an id that does not exist. */
function oracleCases(): HostileCase[] {
  const pair = (
    procedure: ProcedureName,
    attack: string,
    build: (ctx: CaseContext, ids: { thread: string; action: string; file: string }) => unknown,
    foreignIds: (ctx: CaseContext) => { thread?: string; action?: string; file?: string },
    expect: Expectation = { kind: "oracle", refusedStatus: 404 },
  ): HostileCase => ({
    procedure,
    attack: `id oracle: ${attack}`,
    expect,
    async run(ctx) {
      const foreign = foreignIds(ctx);
      const fresh = { thread: freshId(), action: freshId(), file: freshFileId() };
      const withForeign = { ...fresh, ...foreign };
      const first = await ctx.asB(call(procedure, build(ctx, withForeign)));
      const second = await ctx.asB(call(procedure, build(ctx, fresh)));
      return {
        outcomes: [first, second],
        ids: [...Object.values(foreign), fresh.thread, fresh.action, fresh.file].filter(
          (id): id is string => typeof id === "string",
        ),
      };
    },
  });
  const A = (ctx: CaseContext) => ({ thread: ctx.a.threadId });
  return [
    pair("threads.get", "A's threadId", (_, ids) => ({ threadId: ids.thread }), A),
    pair(
      "threads.send",
      "A's threadId (cancelPending)",
      (_, ids) => ({ threadId: ids.thread, message: { text: "take over" }, cancelPending: true }),
      A,
    ),
    pair("threads.cancel", "A's threadId", (_, ids) => ({ threadId: ids.thread, reason: "mine now" }), A),
    pair("threads.watch", "A's threadId", (_, ids) => ({ threadId: ids.thread }), A),
    pair("threads.snapshot", "A's threadId", (_, ids) => ({ threadId: ids.thread }), A),
    pair("threads.events", "A's threadId", (_, ids) => ({ threadId: ids.thread }), A),
    pair(
      "threads.events",
      "A's threadId with afterVersion 0",
      (_, ids) => ({ threadId: ids.thread, afterVersion: 0 }),
      A,
    ),
    pair(
      "threads.watch",
      "A's threadId with afterVersion 0",
      (_, ids) => ({ threadId: ids.thread, afterVersion: 0 }),
      A,
    ),
    pair(
      "actions.submit",
      "A's thread + A's approval action",
      (_, ids) => ({ threadId: ids.thread, actionId: ids.action, payload: { approved: true } }),
      (ctx) => ({ thread: ctx.a.threadId, action: ctx.a.approvalId }),
    ),
    pair(
      "actions.submit",
      "A's thread + A's output action",
      (_, ids) => ({ threadId: ids.thread, actionId: ids.action, payload: { text: "stolen" } }),
      (ctx) => ({ thread: ctx.a.threadId, action: ctx.a.outputId }),
    ),
    pair(
      "actions.submit",
      "B's thread + A's approval action",
      (ctx, ids) => ({ threadId: ctx.b.threadId, actionId: ids.action, payload: { approved: true } }),
      (ctx) => ({ action: ctx.a.approvalId }),
    ),
    pair(
      "actions.submit",
      "A's thread + B's approval action",
      (ctx, ids) => ({ threadId: ids.thread, actionId: ctx.b.approvalId, payload: { approved: true } }),
      A,
    ),
    pair(
      "actions.cancel",
      "A's thread + A's approval action",
      (_, ids) => ({ threadId: ids.thread, actionId: ids.action, reason: "no" }),
      (ctx) => ({ thread: ctx.a.threadId, action: ctx.a.approvalId }),
    ),
    pair(
      "actions.cancel",
      "B's thread + A's output action",
      (ctx, ids) => ({ threadId: ctx.b.threadId, actionId: ids.action }),
      (ctx) => ({ action: ctx.a.outputId }),
    ),
    pair(
      "actions.fail",
      "A's thread + A's output action",
      (_, ids) => ({ threadId: ids.thread, actionId: ids.action, error: "nope" }),
      (ctx) => ({ thread: ctx.a.threadId, action: ctx.a.outputId }),
    ),
    pair(
      "actions.fail",
      "B's thread + A's approval action",
      (ctx, ids) => ({ threadId: ctx.b.threadId, actionId: ids.action, error: { message: "nope" } }),
      (ctx) => ({ action: ctx.a.approvalId }),
    ),
    pair(
      "files.get",
      "A's fileId",
      (_, ids) => ({ fileId: ids.file }),
      (ctx) => ({ file: ctx.a.fileId }),
    ),
    pair(
      "files.get",
      "A's fileId inline",
      (_, ids) => ({ fileId: ids.file, inline: true }),
      (ctx) => ({ file: ctx.a.fileId }),
    ),
    pair(
      "files.upload",
      "attach to A's threadId",
      (_, ids) => ({ threadId: ids.thread, filename: "x.txt", mediaType: "text/plain", body: "aGk=" }),
      A,
    ),
    {
      ...pair(
        "threads.create",
        "threadId = A's threadId (400 for any threadId, or the answer for a free id)",
        (_, ids) => ({ threadId: ids.thread, title: "squat" }),
        A,
        { kind: "oracle", refusedStatus: 400, mayAccept: true },
      ),
      newBobThreads: 2,
    },
    {
      procedure: "threads.send",
      attack: "id oracle: message.id = A's message id (on an idle thread of B's)",
      expect: { kind: "oracle", mayAccept: true },
      newBobThreads: 2,
      async run(ctx) {
        const threads: string[] = [];
        for (let index = 0; index < 2; index++) {
          const created = await ctx.asB(call("threads.create", { title: `bob idle ${index}` }));
          if (!created.ok) return single(created);
          threads.push((created.data as { threadId: string }).threadId);
        }
        const foreign = ctx.a.messageIds[0]!;
        const fresh = freshId();
        const first = await ctx.asB(
          call("threads.send", { threadId: threads[0], message: { id: foreign, text: "hello" } }),
        );
        const second = await ctx.asB(
          call("threads.send", { threadId: threads[1], message: { id: fresh, text: "hello" } }),
        );
        for (const threadId of threads) await ctx.fx.pai.waitForIdle(threadId);
        return { outcomes: [first, second], ids: [foreign, fresh, ...threads] };
      },
    },
  ];
}

/** Deep (2,000 and 100), wide (100k keys) and prototype-keyed JSON in every JSON slot. */
function slotCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const procedure of names) {
    const spec = SPECS[procedure];
    for (const slot of spec.slots) {
      const where = label(slot.path);
      for (const depth of [2000, 100]) {
        cases.push({
          procedure,
          attack: `${where}: JSON nested ${depth} deep`,
          expect: {
            kind: "refused",
            status: 400,
            ...(slot.declaredJson ? { mentions: ["64", slot.name] } : {}),
          },
          run: async (ctx) =>
            single(await ctx.asB(callRaw(procedure, withRaw(spec.base(ctx), slot.path, deepObject(depth))))),
        });
      }
      cases.push({
        procedure,
        attack: `${where}: object with 100,000 keys`,
        expect: { kind: "refused" },
        run: async (ctx) =>
          single(await ctx.asB(callRaw(procedure, withRaw(spec.base(ctx), slot.path, wideObject())))),
      });
      for (const key of PROTO_KEYS) {
        cases.push({
          procedure,
          attack: `${where}: own key "${key}"`,
          expect: { kind: "refused", status: 400, mentions: slot.declaredJson ? [key, slot.name] : [key] },
          run: async (ctx) =>
            single(
              await ctx.asB(
                callRaw(procedure, withRaw(spec.base(ctx), slot.path, protoObject(key, slot.fields))),
              ),
            ),
        });
      }
    }
    for (const slot of spec.slots.filter((item) => item.name === "metadata")) {
      cases.push({
        procedure,
        attack: `${label(slot.path)}: own key "__proto__" one level down`,
        expect: { kind: "refused", status: 400, mentions: ["__proto__", slot.name] },
        run: async (ctx) =>
          single(
            await ctx.asB(
              callRaw(procedure, withRaw(spec.base(ctx), slot.path, `{"safe":${protoObject("__proto__")}}`)),
            ),
          ),
      });
    }
    if (spec.slots.some((slot) => slot.declaredJson)) continue;
    // No JSON slot: the hostile value rides in an unknown key (arrays keep query URLs short).
    for (const depth of [2000, 100]) {
      cases.push({
        procedure,
        attack: `unknown key "extra": JSON nested ${depth} deep`,
        expect: { kind: "refused", status: 400 },
        run: async (ctx) =>
          single(
            await ctx.asB(
              callRaw(
                procedure,
                withRaw(spec.base(ctx), ["extra"], isGet(procedure) ? deepArray(depth) : deepObject(depth)),
              ),
            ),
          ),
      });
    }
    cases.push({
      procedure,
      attack: `unknown key "extra": object with 100,000 keys`,
      expect: { kind: "refused" },
      run: async (ctx) =>
        single(await ctx.asB(callRaw(procedure, withRaw(spec.base(ctx), ["extra"], wideObject())))),
    });
  }
  return cases;
}

/** `__proto__`, `constructor` and `prototype` as own keys of the input object itself. */
function rootProtoCases(): HostileCase[] {
  return names.flatMap((procedure) =>
    PROTO_KEYS.map(
      (key): HostileCase => ({
        procedure,
        attack: `input with own key "${key}"`,
        expect: { kind: "refused", status: 400, mentions: [key] },
        run: async (ctx) => {
          const members = JSON.stringify(SPECS[procedure].base(ctx)).slice(1, -1);
          return single(await ctx.asB(callRaw(procedure, wrapJson(protoObject(key, members)))));
        },
      }),
    ),
  );
}

/** 5 MiB strings. */
function hugeStringCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const procedure of names) {
    const spec = SPECS[procedure];
    cases.push({
      procedure,
      attack: `${label(spec.strings[0]!)}: 5 MiB string`,
      expect: { kind: "refused" },
      run: async (ctx) =>
        single(await ctx.asB(call(procedure, withValue(spec.base(ctx), spec.strings[0]!, hugeString())))),
    });
  }
  cases.push({
    procedure: "files.upload",
    attack: "body: 5 MiB of text that is not base64",
    expect: { kind: "refused", status: 400 },
    run: async (ctx) =>
      single(
        await ctx.asB(
          call("files.upload", withValue(SPECS["files.upload"].base(ctx), ["body"], "!".repeat(MB5))),
        ),
      ),
  });
  return cases;
}

/** Integers beyond what a version or a page size can be. */
function rangeCases(): HostileCase[] {
  const watch = (
    attack: string,
    input: (ctx: CaseContext) => unknown,
    headers?: Record<string, string>,
    procedure: "threads.watch" | "threads.events" = "threads.watch",
  ) => ({
    procedure,
    attack,
    expect: { kind: "refused" as const, status: 400 },
    run: async (ctx: CaseContext) => single(await ctx.asB(call(procedure, input(ctx), headers))),
  });
  const list = (procedure: "threads.list" | "actions.list", limit: number): HostileCase => ({
    procedure,
    attack: `limit: ${limit}`,
    expect: { kind: "refused", status: 400 },
    run: async (ctx) => single(await ctx.asB(call(procedure, { limit }))),
  });
  return [
    watch("afterVersion: 2147483648", (ctx) => ({ threadId: ctx.b.threadId, afterVersion: 2147483648 })),
    watch(
      "afterVersion: 2147483648",
      (ctx) => ({ threadId: ctx.b.threadId, afterVersion: 2147483648 }),
      undefined,
      "threads.events",
    ),
    watch(
      'Last-Event-Id header "99999999999999"',
      (ctx) => ({ threadId: ctx.b.threadId }),
      { "last-event-id": "99999999999999" },
      "threads.events",
    ),
    {
      procedure: "threads.watch",
      attack: "afterVersion: 9007199254740993 (beyond a safe integer, sent as JSON text)",
      expect: { kind: "refused", status: 400 },
      run: async (ctx) =>
        single(
          await ctx.asB(
            callRaw(
              "threads.watch",
              wrapJson(
                rawJson({ threadId: ctx.b.threadId, afterVersion: "@@N@@" }, { N: "9007199254740993" }),
              ),
            ),
          ),
        ),
    },
    watch("afterVersion: -1", (ctx) => ({ threadId: ctx.b.threadId, afterVersion: -1 })),
    watch("afterVersion: 1.5", (ctx) => ({ threadId: ctx.b.threadId, afterVersion: 1.5 })),
    watch('lastEventId: "99999999999999" in the input', (ctx) => ({
      threadId: ctx.b.threadId,
      lastEventId: "99999999999999",
    })),
    watch('Last-Event-Id header "99999999999999"', (ctx) => ({ threadId: ctx.b.threadId }), {
      "last-event-id": "99999999999999",
    }),
    {
      procedure: "threads.watch",
      attack: 'lastEventId query parameter "99999999999999"',
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => {
        const request = call("threads.watch", { threadId: ctx.b.threadId });
        return single(await ctx.asB({ ...request, query: `${request.query}&lastEventId=99999999999999` }));
      },
    },
    watch('lastEventId: "2147483648"', (ctx) => ({ threadId: ctx.b.threadId, lastEventId: "2147483648" })),
    list("threads.list", 1e12),
    list("threads.list", 2147483648),
    list("threads.list", 0),
    list("actions.list", 1e12),
    list("actions.list", -1),
  ];
}

/** Inputs of the wrong type, whole or per field. */
function wrongTypeCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const procedure of names) {
    const spec = SPECS[procedure];
    cases.push({
      procedure,
      attack: "input is an array",
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => single(await ctx.asB(call(procedure, [spec.base(ctx)]))),
    });
    const field = spec.strings[0]!;
    for (const [kind, value] of [
      ["a number", 12345],
      ["an object", { $ne: null }],
    ] as const) {
      cases.push({
        procedure,
        attack: `${label(field)} is ${kind}`,
        expect: { kind: "refused", status: 400 },
        run: async (ctx) => single(await ctx.asB(call(procedure, withValue(spec.base(ctx), field, value)))),
      });
    }
  }
  const specific: Array<[ProcedureName, string, (ctx: CaseContext) => unknown]> = [
    [
      "threads.send",
      'cancelPending is "yes"',
      (ctx) => ({ ...SPECS["threads.send"].base(ctx), cancelPending: "yes" }),
    ],
    ["threads.send", "message is a string", (ctx) => ({ threadId: ctx.b.threadId, message: "hello" })],
    [
      "threads.send",
      "clientTools is an object",
      (ctx) => ({ ...SPECS["threads.send"].base(ctx), clientTools: { a: 1 } }),
    ],
    ["files.get", 'inline is "true"', () => ({ fileId: freshFileId(), inline: "true" })],
    [
      "files.upload",
      'mediaType is "../../etc/passwd"',
      (ctx) => ({ ...SPECS["files.upload"].base(ctx), mediaType: "../../etc/passwd" }),
    ],
    ["actions.list", 'state is "everything"', () => ({ state: "everything" })],
    ["threads.watch", 'afterVersion is "0"', (ctx) => ({ threadId: ctx.b.threadId, afterVersion: "0" })],
  ];
  for (const [procedure, attack, input] of specific) {
    cases.push({
      procedure,
      attack,
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => single(await ctx.asB(call(procedure, input(ctx)))),
    });
  }
  return cases;
}

/** Bodies and query strings that are not what tRPC expects. */
function malformedCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const procedure of names) {
    const path = pathOf(procedure);
    const kind = PROCEDURES[procedure];
    if (kind === "mutation") {
      cases.push(
        {
          procedure,
          attack: "body is not JSON",
          expect: { kind: "refused", status: 400 },
          run: async (ctx) => single(await ctx.asB(mutationRawReq(path, '{"json": {"threadId": '))),
        },
        {
          procedure,
          attack: "content-type text/plain",
          expect: { kind: "refused" },
          run: async (ctx) =>
            single(
              await ctx.asB(
                mutationRawReq(path, JSON.stringify({ json: SPECS[procedure].base(ctx) }), "text/plain"),
              ),
            ),
        },
        SPECS[procedure].requiresInput
          ? {
              procedure,
              attack: "empty body",
              expect: { kind: "refused", status: 400 },
              run: async (ctx) => single(await ctx.asB(mutationRawReq(path, ""))),
            }
          : {
              procedure,
              attack: "empty body (a legitimate call with defaults)",
              expect: { kind: "accepted" },
              newBobThreads: 1,
              run: async (ctx) => single(await ctx.asB(mutationRawReq(path, ""))),
            },
        {
          procedure,
          attack: "GET to a mutation",
          expect: { kind: "refused", status: 405 },
          run: async (ctx) => single(await ctx.asB(queryReq(path, SPECS[procedure].base(ctx)))),
        },
      );
      continue;
    }
    const asKind = kind === "subscription" ? subscriptionRawReq : queryRawReq;
    cases.push(
      {
        procedure,
        attack: "?input= is not JSON",
        expect: { kind: "refused", status: 400 },
        run: async (ctx) => single(await ctx.asB(asKind(path, '{"json": {"threadId": '))),
      },
      {
        procedure,
        attack: "POST to a query/subscription",
        expect: { kind: "refused", status: 405 },
        run: async (ctx) => single(await ctx.asB(mutationReq(path, SPECS[procedure].base(ctx)))),
      },
    );
    if (SPECS[procedure].requiresInput) {
      cases.push(
        {
          procedure,
          attack: "no input",
          expect: { kind: "refused", status: 400 },
          run: async (ctx) => single(await ctx.asB({ ...call(procedure, undefined), query: "" })),
        },
        {
          procedure,
          attack: 'input without the superjson "json" wrapper',
          expect: { kind: "refused", status: 400 },
          run: async (ctx) => single(await ctx.asB(asKind(path, JSON.stringify(SPECS[procedure].base(ctx))))),
        },
      );
    }
  }
  cases.push(
    {
      procedure: "threads.send",
      attack: "content-type application/octet-stream",
      expect: { kind: "refused" },
      run: async (ctx) =>
        single(
          await ctx.asB(
            mutationRawReq(
              "pai.threads.send",
              JSON.stringify({ json: SPECS["threads.send"].base(ctx) }),
              "application/octet-stream",
            ),
          ),
        ),
    },
    {
      procedure: "files.upload",
      attack: "content-type multipart/form-data with a junk body",
      expect: { kind: "refused" },
      run: async (ctx) =>
        single(
          await ctx.asB(mutationRawReq("pai.files.upload", "--x\r\njunk", "multipart/form-data; boundary=x")),
        ),
    },
  );
  return cases;
}

/** superjson `meta` annotations that rebuild values the JSON could not carry. */
function superjsonMetaCases(): HostileCase[] {
  const cases: HostileCase[] = names.map((procedure) => ({
    procedure,
    attack: 'superjson meta writing through "__proto__"',
    expect: { kind: "refused", status: 400 },
    run: async (ctx) => {
      const text = JSON.stringify({
        json: SPECS[procedure].base(ctx),
        meta: { values: { "__proto__.polluted": ["undefined"] } },
      });
      return single(await ctx.asB(callRaw(procedure, text)));
    },
  }));
  const meta: Array<[ProcedureName, string, (ctx: CaseContext) => unknown]> = [
    [
      "threads.list",
      "limit as a bigint",
      () => ({ json: { limit: "99999999999999999999" }, meta: { values: { limit: ["bigint"] } } }),
    ],
    [
      "threads.watch",
      "afterVersion as Infinity",
      (ctx) => ({
        json: { threadId: ctx.b.threadId, afterVersion: "Infinity" },
        meta: { values: { afterVersion: ["number"] } },
      }),
    ],
    [
      "threads.create",
      "metadata holding a Date",
      () => ({
        json: { title: "dated", metadata: { at: "2020-01-01T00:00:00.000Z" } },
        meta: { values: { "metadata.at": ["Date"] } },
      }),
    ],
    [
      "actions.submit",
      "payload as a Map",
      (ctx) => ({
        json: { threadId: ctx.b.threadId, actionId: ctx.b.approvalId, payload: [["approved", true]] },
        meta: { values: { payload: ["map"] } },
      }),
    ],
    [
      "threads.get",
      "threadId as an unknown custom class",
      (ctx) => ({ json: { threadId: ctx.b.threadId }, meta: { values: { threadId: [["custom", "Evil"]] } } }),
    ],
    [
      "threads.send",
      "clientData through referentialEqualities into __proto__",
      (ctx) => ({
        json: { ...(SPECS["threads.send"].base(ctx) as object), clientData: { a: { b: 1 } } },
        meta: { referentialEqualities: { "clientData.a": ["__proto__"] } },
      }),
    ],
  ];
  for (const [procedure, attack, payload] of meta) {
    cases.push({
      procedure,
      attack: `superjson meta: ${attack}`,
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => single(await ctx.asB(callRaw(procedure, JSON.stringify(payload(ctx))))),
    });
  }
  return cases;
}

/** Legitimate reads by B: answered, and nothing of A's in them. */
function listingCases(): HostileCase[] {
  return [
    {
      procedure: "threads.list",
      attack: "B lists threads (control: must not see A's)",
      expect: { kind: "accepted" },
      run: async (ctx) => single(await ctx.asB(call("threads.list", { limit: 200 }))),
    },
    {
      procedure: "actions.list",
      attack: "B lists pending actions (control: must not see A's)",
      expect: { kind: "accepted" },
      run: async (ctx) => single(await ctx.asB(call("actions.list", { state: "pending", limit: 200 }))),
    },
    {
      procedure: "manifest",
      attack: "B reads the manifest (control)",
      expect: { kind: "accepted" },
      run: async (ctx) => single(await ctx.asB(call("manifest", undefined))),
    },
    {
      procedure: "threads.create",
      attack: "metadata nested 50 deep (control: within the limit, accepted)",
      expect: { kind: "accepted" },
      newBobThreads: 1,
      run: async (ctx) =>
        single(
          await ctx.asB(
            callRaw("threads.create", withRaw({ title: "deep but fine" }, ["metadata"], deepObject(50))),
          ),
        ),
    },
    {
      procedure: "threads.list",
      attack: "a forged cursor of the right shape with objects in it",
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => {
        const cursor = Buffer.from(JSON.stringify([{ $gt: "" }, ["x", 1]])).toString("base64url");
        return single(await ctx.asB(call("threads.list", { limit: 10, cursor })));
      },
    },
    {
      procedure: "actions.list",
      attack: "a forged cursor of the right shape with objects in it",
      expect: { kind: "refused", status: 400 },
      run: async (ctx) => {
        const cursor = Buffer.from(JSON.stringify([{ $gt: "" }, ["x", 1], true])).toString("base64url");
        return single(await ctx.asB(call("actions.list", { limit: 10, cursor })));
      },
    },
  ];
}

export function buildCases(): HostileCase[] {
  return [
    ...oracleCases(),
    ...slotCases(),
    ...rootProtoCases(),
    ...hugeStringCases(),
    ...rangeCases(),
    ...wrongTypeCases(),
    ...malformedCases(),
    ...superjsonMetaCases(),
    ...listingCases(),
  ];
}
