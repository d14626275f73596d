/**
 * The generated tools: one spec per tool, shared by the PAI and the plain AI SDK sources so
 * both sides type-check the same zod schemas. Field names carry the tool's index because real
 * tools have schemas of their own; identical shapes would let TypeScript reuse its work.
 */
export type ToolSpec = {
  index: number;
  name: string;
  /** Suspend point names (PAI) / an approval request (AI SDK); empty when the tool never waits. */
  suspendPoints: string[];
  /** Writes a `progress` data channel. */
  data: boolean;
  /** Declares a `contextSchema` the agent's runtime context satisfies. */
  context: boolean;
  /** Gets the `sandbox` capability. */
  capability: boolean;
  /** No backend execute: a client answers with the output. */
  clientTool: boolean;
};

export function toolSpecs(count: number): ToolSpec[] {
  return Array.from({ length: count }, (_, index) => {
    const clientTool = index % 10 === 7;
    const suspendCount = index % 2 === 0 ? 1 + ((index / 2) % 3) : 0;
    return {
      index,
      name: `tool${index}`,
      suspendPoints: Array.from({ length: suspendCount }, (_, point) => `point${point}`),
      data: !clientTool && index % 4 === 1,
      context: !clientTool && index % 3 === 1,
      capability: !clientTool && index % 8 === 3,
      clientTool,
    };
  });
}

export function inputSchema({ index: i }: ToolSpec): string {
  return `z.object({ query${i}: z.string(), limit${i}: z.number().int(), exact${i}: z.boolean(), tags${i}: z.array(z.string()), mode${i}: z.enum(["fast", "full"]) })`;
}

export function outputSchema({ index: i }: ToolSpec): string {
  return `z.object({ id${i}: z.string(), total${i}: z.number(), ok${i}: z.boolean(), items${i}: z.array(z.object({ key: z.string(), value: z.number() })), status${i}: z.enum(["done", "partial"]) })`;
}

/** An output value literal matching `outputSchema`. */
export function outputValue({ index: i }: ToolSpec, id: string): string {
  return `{ id${i}: ${id}, total${i}: 1, ok${i}: true, items${i}: [{ key: "a", value: 1 }], status${i}: "done" }`;
}

export const suspendSchema = "z.object({ prompt: z.string(), level: z.number() })";
export const resumeSchema = "z.object({ approved: z.boolean(), note: z.string().optional() })";
export const progressSchema = "z.object({ step: z.string(), pct: z.number() })";
