import { normalizeJson, PaiError } from "@pai/core";
import { idProblem, MAX_STORED_ID_LENGTH } from "@pai/core/protocol";
import { z } from "zod";

/**
 * Input bounds of a chat request, checked before anything else reads it. They are the bounds of
 * `createPaiRouter` (`PaiRouterLimits` of `@pai/transport-trpc`, which passes its own), so a body
 * the fetch handler accepts is one `threads.send` would accept too.
 */
export type PaiChatLimits = {
  /**
   * Longest id (thread, message, action, tool call, idempotency key). Default 200, and never more
   * than 191 (`MAX_STORED_ID_LENGTH`): MySQL's id columns are varchar(191), so a longer message id
   * failed there with INTERNAL.
   */
  maxIdLength: number;
  /** Most parts in the sent message. Default 64. */
  maxMessageParts: number;
  /** Most frontend-defined client tools per request. Default 32. */
  maxClientTools: number;
  /** Largest JSON value (payload, output, clientData, a part, a client tool) in UTF-16 units. Default 256 KiB. */
  maxJsonSize: number;
  /** Deepest nesting of arrays and objects in one of those values. Default 64. */
  maxJsonDepth: number;
};

/** The defaults of `DEFAULT_PAI_ROUTER_LIMITS` (`@pai/transport-trpc`), which this package does not depend on. */
export const DEFAULT_PAI_CHAT_LIMITS: Readonly<PaiChatLimits> = Object.freeze({
  maxIdLength: 200,
  maxMessageParts: 64,
  maxClientTools: 32,
  maxJsonSize: 256 * 1024,
  maxJsonDepth: 64,
});

/**
 * The schema of the body `PaiChatTransport` posts and the chat handler reads, for one set of
 * limits. An answer is what the SDK's own calls produce on the last assistant message
 * (`addToolOutput`, `addToolApprovalResponse`) or what the transport's typed helpers send for
 * other suspend points.
 */
export function createChatRequestSchema(limits: PaiChatLimits = DEFAULT_PAI_CHAT_LIMITS) {
  // Ids as the router takes them: bounded, and exact (no whitespace at either end, no control characters).
  const id = z
    .string()
    .min(1)
    .max(Math.min(limits.maxIdLength, MAX_STORED_ID_LENGTH))
    .superRefine((value, ctx) => {
      const problem = idProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });
  /**
   * Bounded JSON in linear time (depth, size, the keys `__proto__` / `constructor` / `prototype`),
   * refused before the service walks the value. `extraDepth` is the object a part or a client tool
   * is: its entries get the depth a JSON value has on its own.
   */
  const bounded =
    (extraDepth = 0) =>
    (value: unknown, ctx: z.RefinementCtx) => {
      if (value === undefined) return;
      try {
        normalizeJson(value, "JSON value", {
          maxDepth: limits.maxJsonDepth + extraDepth,
          maxSize: limits.maxJsonSize,
        });
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: PaiError.isInstance(error) ? error.message : "Expected a JSON value.",
        });
      }
    };
  const json = z.unknown().superRefine(bounded());
  const jsonRecord = z.record(z.string(), z.unknown()).superRefine(bounded(1));

  const answer = z.discriminatedUnion("type", [
    z.object({ type: z.literal("tool-output"), toolCallId: id, output: json }),
    z.object({ type: z.literal("tool-error"), toolCallId: id, errorText: z.string().max(10_000) }),
    z.object({
      type: z.literal("approval"),
      approvalId: id,
      approved: z.boolean(),
      reason: z.string().max(10_000).optional(),
    }),
    z.object({
      type: z.literal("action"),
      actionId: id,
      /** `tool.point`: when given, the action must have this name. */
      name: z.string().min(1).max(limits.maxIdLength).optional(),
      kind: z.enum(["submit", "cancel", "fail"]),
      payload: json.optional(),
      reason: z.string().max(10_000).optional(),
      error: z.string().max(10_000).optional(),
      idempotencyKey: id.optional(),
    }),
  ]);

  return z
    .object({
      threadId: id,
      message: z
        .object({
          id: id.optional(),
          parts: z.array(jsonRecord).max(limits.maxMessageParts),
        })
        .optional(),
      answers: z.array(answer).max(100).optional(),
      clientTools: z.array(jsonRecord).max(limits.maxClientTools).optional(),
      clientData: json.optional(),
      /** Answer only, without streaming the continuation (the transport's typed helpers). */
      stream: z.boolean().optional(),
    })
    .strict();
}

/** The schema of the default limits. */
export const chatRequestSchema = createChatRequestSchema();

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
export type ChatAnswer = NonNullable<ChatRequestBody["answers"]>[number];
