import { type JsonObject, type JsonValue, normalizeJson, PaiError } from "@pai/core";
import {
  fileUrlProblem,
  idProblem,
  MAX_STORED_ID_LENGTH,
  MAX_WAIT_MS,
  mediaTypeProblem,
} from "@pai/core/protocol";
import { z } from "zod";
import { BASE64_PATTERN } from "./base64.js";

/** Input size limits of the PAI procedures. Every limit is checked before the service runs. */
export type PaiRouterLimits = {
  /**
   * Longest id (thread, action, file, message, idempotency key). Default 200; a message id, which
   * is stored, is capped at 191 whatever this says. Ids with whitespace at either end or control
   * characters are refused.
   */
  maxIdLength: number;
  /** Longest text in a message part, title, reason or error message. Default 100_000. */
  maxTextLength: number;
  /** Most parts in one outgoing message. Default 64. */
  maxMessageParts: number;
  /** Largest JSON value (submit payload, clientData, metadata, client tool schemas) in UTF-16 units. Default 256 KiB. */
  maxJsonSize: number;
  /** Deepest nesting of arrays and objects in a JSON value. Default 64. */
  maxJsonDepth: number;
  /** Most frontend-defined client tools per request. Default 32. */
  maxClientTools: number;
  /**
   * Largest uploaded file in bytes. Uploads travel base64-encoded in JSON (a third larger than
   * the file), so the host's HTTP body limit must allow about `maxUploadBytes * 4 / 3` plus
   * metadata. Larger uploads fail with PAYLOAD_TOO_LARGE. Default 10 MiB.
   */
  maxUploadBytes: number;
  /** Largest file returned inline by `files.get` when no download URL is available. Default 10 MiB. */
  maxInlineDownloadBytes: number;
  /** Largest page size of list procedures. Default 200. */
  maxPageSize: number;
};

export const DEFAULT_PAI_ROUTER_LIMITS: PaiRouterLimits = {
  maxIdLength: 200,
  maxTextLength: 100_000,
  maxMessageParts: 64,
  maxJsonSize: 256 * 1024,
  maxJsonDepth: 64,
  maxClientTools: 32,
  maxUploadBytes: 10 * 1024 * 1024,
  maxInlineDownloadBytes: 10 * 1024 * 1024,
  maxPageSize: 200,
};

/** Largest thread version (and event id) storage holds: a signed 32-bit integer column. */
export const MAX_THREAD_VERSION = 2_147_483_647;

/** Ids a client sends: within `maxIdLength`, exact (see `idProblem`); a stored message id within 191. */
export function idSchemas(limits: Pick<PaiRouterLimits, "maxIdLength">) {
  const exactId = (value: string, ctx: z.RefinementCtx) => {
    const problem = idProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  };
  const id = z.string().min(1).max(limits.maxIdLength).superRefine(exactId);
  // A message id is stored: no longer than the shortest id column of any storage (MySQL's).
  const messageId = z
    .string()
    .min(1)
    .max(Math.min(limits.maxIdLength, MAX_STORED_ID_LENGTH))
    .superRefine(exactId);
  return { id, messageId };
}

/** Builds the Zod input schemas for one set of limits. */
export function createPaiSchemas(limits: PaiRouterLimits) {
  const { id, messageId } = idSchemas(limits);
  const text = z.string().max(limits.maxTextLength);
  const jsonLimits = { maxDepth: limits.maxJsonDepth, maxSize: limits.maxJsonSize };
  /**
   * Bounded JSON in linear time: depth, size and the keys `__proto__` / `constructor` /
   * `prototype` are refused with the offending path, before any PAI code sees the value.
   */
  const bounded = (value: unknown, ctx: z.RefinementCtx) => {
    if (value === undefined) return;
    try {
      normalizeJson(value, "JSON value", jsonLimits);
    } catch (error) {
      const issue = PaiError.isInstance(error) ? error.issues?.[0] : undefined;
      ctx.addIssue({
        code: "custom",
        message: PaiError.isInstance(error) ? error.message : "Expected a JSON value.",
        ...(issue ? { path: issue.path } : {}),
      });
    }
  };
  const json = z
    .custom<JsonValue>((value) => value !== undefined, { message: "Expected a JSON value." })
    .superRefine(bounded);
  const jsonObject = z
    .custom<JsonObject>((value) => typeof value === "object" && value !== null && !Array.isArray(value), {
      message: "Expected a JSON object.",
    })
    .superRefine(bounded);
  const page = {
    limit: z.number().int().min(1).max(limits.maxPageSize).optional(),
    cursor: z.string().max(limits.maxTextLength).nullish(),
  };
  const clientTool = z.strictObject({
    name: z.string().min(1).max(128),
    description: text,
    inputSchema: jsonObject,
    outputSchema: jsonObject.optional(),
  });
  const runRequest = {
    clientTools: z.array(clientTool).max(limits.maxClientTools).optional(),
    clientData: json.optional(),
  };
  /** Answer once the run stopped (parked, ended), at most this long: see `WaitOption`. */
  const waitMs = z.number().int().min(1).max(MAX_WAIT_MS).optional();
  /**
   * A file part's URL: https:, http: or data: only (a data: URL with its data), within the text
   * limit. Any other scheme would stay in the thread's history and fail every later model call.
   * The server never fetches it unless the runtime opts in (`createPai({ download })`).
   */
  const fileUrl = text.superRefine((value, ctx) => {
    const problem = fileUrlProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: `url ${problem}` });
  });
  const mediaType = z.string().superRefine((value, ctx) => {
    const problem = mediaTypeProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: `mediaType ${problem}` });
  });
  const messagePart = z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("text"), text }),
    z.strictObject({
      type: z.literal("file"),
      mediaType,
      url: fileUrl,
      filename: z.string().max(1024).optional(),
    }),
  ]);
  const message = z.union([
    z.strictObject({ text, id: messageId.optional() }),
    z.strictObject({
      id: messageId.optional(),
      parts: z.array(messagePart).min(1).max(limits.maxMessageParts),
    }),
  ]);
  const maxBase64 = Math.ceil(limits.maxUploadBytes / 3) * 4;

  // Set by tRPC's subscription link when it reconnects: the last tracked id the client received.
  const lastEventId = z.string().max(32).optional();
  return {
    chat: {
      // The chat body itself is validated by the chat streams (`parseChatRequest`), bounded here.
      send: z.record(z.string(), json).superRefine(bounded),
      resume: z.strictObject({
        threadId: id,
        lastEventId,
        since: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1)
          .optional(),
      }),
      messages: z.strictObject({ threadId: id }),
    },
    manifest: z.strictObject({ agentId: id.optional() }).optional(),
    threads: {
      create: z
        .strictObject({
          agentId: id.optional(),
          title: z.string().max(1000).optional(),
          metadata: jsonObject.optional(),
          /** The first message: the thread is created with it and its run started in one commit. */
          message: message.optional(),
          ...runRequest,
          waitMs,
        })
        .optional(),
      list: z.strictObject({ agentId: id.optional(), ...page }).optional(),
      get: z.strictObject({ threadId: id }),
      send: z.strictObject({
        threadId: id,
        message,
        cancelPending: z.boolean().optional(),
        ...runRequest,
        waitMs,
      }),
      cancel: z.strictObject({ threadId: id, reason: text.optional() }),
      watch: z.strictObject({
        threadId: id,
        afterVersion: z.number().int().min(0).max(MAX_THREAD_VERSION).optional(),
        /** Set by tRPC on reconnect: the last tracked id (a version) the client received. */
        lastEventId: z
          .string()
          .regex(/^\d{1,10}$/, "lastEventId must be a thread version.")
          .refine((value) => Number(value) <= MAX_THREAD_VERSION, "lastEventId must be a thread version.")
          .nullish(),
      }),
    },
    actions: {
      list: z
        .strictObject({ state: z.enum(["pending", "submitted", "cancelled", "failed"]).optional(), ...page })
        .optional(),
      submit: z.strictObject({
        threadId: id,
        actionId: id,
        /** The action's qualified name; when given it must match (typed clients send it). */
        name: z.string().min(1).max(limits.maxIdLength).optional(),
        /** Marks an answer to an action outside the agents' contract (typed clients only). */
        untyped: z.boolean().optional(),
        // Any size-bounded value, including none: the tool's resume or output schema decides.
        payload: z.unknown().superRefine(bounded),
        idempotencyKey: id.optional(),
        ...runRequest,
        waitMs,
      }),
      cancel: z.strictObject({
        threadId: id,
        actionId: id,
        reason: text.optional(),
        idempotencyKey: id.optional(),
        waitMs,
      }),
      fail: z.strictObject({
        threadId: id,
        actionId: id,
        error: z.union([text, z.strictObject({ message: text })]),
        idempotencyKey: id.optional(),
        waitMs,
      }),
    },
    files: {
      upload: z.strictObject({
        threadId: id.nullish(),
        filename: z.string().min(1).max(1024),
        mediaType,
        // Over-limit bodies pass unchecked so the resolver answers PAYLOAD_TOO_LARGE (a schema
        // failure would be a generic BAD_REQUEST) without running the pattern over them.
        body: z
          .string()
          .refine((value) => value.length > maxBase64 || BASE64_PATTERN.test(value), "body must be base64."),
        metadata: jsonObject.optional(),
      }),
      get: z.strictObject({ fileId: id, inline: z.boolean().optional() }),
    },
  };
}
