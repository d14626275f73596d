const marker = Symbol.for("pai.tool-invocation-error");

/**
 * Rejection of a nested (child) tool call made through `ctx.tools.<name>.execute`.
 * `message` is the model-safe text: a `ctx.fail` sentence, a `mapError` projection or a
 * generic message for unexpected exceptions.
 */
export class ToolInvocationError extends Error {
  readonly [marker] = true;
  readonly toolName: string;
  readonly toolCallId: string;

  constructor(input: { toolName: string; toolCallId: string; message: string; cause?: unknown }) {
    super(input.message, input.cause === undefined ? undefined : { cause: input.cause });
    this.name = "ToolInvocationError";
    this.toolName = input.toolName;
    this.toolCallId = input.toolCallId;
  }

  static isInstance(value: unknown): value is ToolInvocationError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
