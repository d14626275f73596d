import { asSchema, jsonSchema, type Schema } from "ai";
import type { ToolSchema } from "./schema.js";

const cache = new WeakMap<object, Promise<Schema<unknown>>>();

/**
 * An AI SDK schema whose JSON Schema is computed once per tool schema and reused for every
 * model step (converting a Zod schema to JSON Schema on each call is measurable per step).
 * Validation still delegates to the original schema.
 */
export function cachedSdkSchema(schema: ToolSchema): Promise<Schema<unknown>> {
  const key = schema as object;
  let cached = cache.get(key);
  if (!cached) {
    cached = (async () => {
      const sdk = asSchema(schema);
      const json = await sdk.jsonSchema;
      return jsonSchema(
        json,
        sdk.validate ? { validate: (value) => sdk.validate!(value) } : {},
      ) as Schema<unknown>;
    })();
    cache.set(key, cached);
  }
  return cached;
}
