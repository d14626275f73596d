import { z } from "zod";

/**
 * The body `PaiChatTransport` posts and the chat handler reads. An answer is what the SDK's own
 * calls produce on the last assistant message (`addToolOutput`, `addToolApprovalResponse`) or what
 * the transport's typed helpers send for other suspend points.
 */
const json = z.unknown();

export const chatAnswerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("tool-output"), toolCallId: z.string().min(1).max(512), output: json }),
  z.object({
    type: z.literal("tool-error"),
    toolCallId: z.string().min(1).max(512),
    errorText: z.string().max(10_000),
  }),
  z.object({
    type: z.literal("approval"),
    approvalId: z.string().min(1).max(512),
    approved: z.boolean(),
    reason: z.string().max(10_000).optional(),
  }),
  z.object({
    type: z.literal("action"),
    actionId: z.string().min(1).max(512),
    /** `tool.point`: when given, the action must have this name. */
    name: z.string().min(1).max(512).optional(),
    kind: z.enum(["submit", "cancel", "fail"]),
    payload: json.optional(),
    reason: z.string().max(10_000).optional(),
    error: z.string().max(10_000).optional(),
    idempotencyKey: z.string().min(1).max(256).optional(),
  }),
]);

export const chatRequestSchema = z
  .object({
    threadId: z.string().min(1).max(512),
    message: z
      .object({
        id: z.string().min(1).max(512).optional(),
        parts: z.array(z.record(z.string(), z.unknown())).max(100),
      })
      .optional(),
    answers: z.array(chatAnswerSchema).max(100).optional(),
    clientTools: z.array(z.record(z.string(), z.unknown())).max(100).optional(),
    clientData: json.optional(),
    /** Answer only, without streaming the continuation (the transport's typed helpers). */
    stream: z.boolean().optional(),
  })
  .strict();

export type ChatAnswer = z.infer<typeof chatAnswerSchema>;
export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
