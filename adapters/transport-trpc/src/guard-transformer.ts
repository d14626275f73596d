import { assertPlainKeys, DEFAULT_JSON_LIMITS, PaiError } from "@pai/core";
import { TRPCError } from "@trpc/server";

/** A transformer as tRPC accepts it: one object for both ways, or separate input / output ones. */
type DataTransformer = { serialize(value: any): any; deserialize(value: any): any };
type CombinedDataTransformer = { input: DataTransformer; output: DataTransformer };

/**
 * Wraps the host's tRPC transformer (e.g. superjson) so that request input is checked on its
 * raw JSON before the transformer rebuilds it. Transformers copy objects by assignment, which
 * silently drops an own `__proto__` key; PAI refuses such input with BAD_REQUEST naming the
 * path instead, as it does for `constructor` / `prototype` keys and JSON nested deeper than
 * `maxDepth` (default 64). Pass it to `initTRPC.create({ transformer: guardTransformer(superjson) })`
 * and keep the plain transformer on the client: the wire format does not change.
 */
export function guardTransformer(
  transformer?: DataTransformer | CombinedDataTransformer,
  options: { maxDepth?: number } = {},
): CombinedDataTransformer {
  const identity: DataTransformer = { serialize: (value) => value, deserialize: (value) => value };
  const input = !transformer ? identity : "input" in transformer ? transformer.input : transformer;
  const output = !transformer ? identity : "output" in transformer ? transformer.output : transformer;
  const valueDepth = options.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth;
  // Measured from the request's root: the transformer's envelope (superjson's { json, meta })
  // and the procedure's own fields add a few levels above a JSON value's own nesting.
  const maxDepth = valueDepth + 8;
  return {
    input: {
      serialize: (value) => input.serialize(value),
      deserialize: (raw) => {
        try {
          assertPlainKeys(raw, "Request input", { maxDepth });
        } catch (error) {
          const issue = PaiError.isInstance(error) ? error.issues?.[0] : undefined;
          const path = issue
            ? `$${issue.path.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`)).join("")}`
            : "";
          const message = !issue
            ? "The request input is not valid JSON."
            : issue.message.startsWith("nested deeper")
              ? `Request input: ${path} is nested too deep. PAI accepts JSON values nested at most ${valueDepth} levels; flatten the value.`
              : (error as PaiError).message;
          throw new TRPCError({
            code: "BAD_REQUEST",
            message,
            cause: new PaiError("INVALID_INPUT", message, issue ? { issues: [issue] } : {}),
          });
        }
        return input.deserialize(raw);
      },
    },
    output,
  };
}
