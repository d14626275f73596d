/**
 * The tool names of the `tool-<name>` parts in a message part union: the contract's tool names
 * for a typed message, `string` for a contract-erased one (or a part whose `type` is any string).
 */
export type ToolPartName<TPart> = unknown extends TPart
  ? string
  : TPart extends { type: infer TType extends string }
    ? string extends TType
      ? string
      : TType extends `tool-${infer TName}`
        ? TName
        : never
    : never;

/**
 * What `isToolPart(part, name)` asserts. Narrowing a message part union with it keeps the
 * union's own `tool-<name>` members, so `state`, `input`, `output` and the PAI sidecars stay
 * typed from the contract.
 */
export type NamedToolPart<TName extends string> = { type: `tool-${TName}`; toolCallId: string };

/** What `isToolPart(part)` asserts: a native tool part, static (`tool-<name>`) or `dynamic-tool`. */
export type AnyToolPart = { type: `tool-${string}` | "dynamic-tool"; toolCallId: string };

// Why the guards assert one small object type rather than an `Extract` of the part union:
// TypeScript narrows a union by relating each of its members to each member of the asserted
// type. A typed message has about eight members per tool (one per native state), so asserting
// a sub-union costs (8 × tools)² relations, 2.7 million at 200 tools; a single object costs one
// or a few relations per member. The narrowed type is the same: the union's own members.

/**
 * True for the native `tool-<name>` parts of one tool, and narrows a message part to them,
 * typed from the agent contract. `name` must be one of the union's tool names.
 *
 * `dynamic-tool` parts (provider tools, request-time client tools, tools not registered when
 * the model called them) never match, even when their `toolName` is `name`: their input and
 * output are not the contract's. Narrow those with `part.type === "dynamic-tool"`.
 *
 * Without `name`: true for any native tool part, `tool-<name>` or `dynamic-tool`.
 */
// `part` also accepts the asserted type because TypeScript requires a predicate's type to be
// assignable to its parameter's; `TPart` is still inferred as the argument's own union.
export function isToolPart<TPart, TName extends ToolPartName<TPart>>(
  part: TPart | NamedToolPart<string>,
  name: TName,
): part is NamedToolPart<TName>;
export function isToolPart(part: unknown): part is AnyToolPart;
export function isToolPart(part: unknown, name?: string): boolean {
  if (typeof part !== "object" || part === null) return false;
  const { type, toolCallId, toolName } = part as { type?: unknown; toolCallId?: unknown; toolName?: unknown };
  if (typeof type !== "string" || typeof toolCallId !== "string") return false;
  if (name !== undefined) return name !== "" && type === `tool-${name}`;
  if (type === "dynamic-tool") return typeof toolName === "string";
  return type.startsWith("tool-") && type.length > "tool-".length;
}
