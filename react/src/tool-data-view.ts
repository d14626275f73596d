import type { ToolDataItemView, ToolDataView } from "@pai/core/protocol";
import type { ToolDataChannel } from "./render-types.js";

// Keys that generic code probes on any object; they must keep reading as absent.
const PROBES = new Set(["then", "toJSON", "$$typeof", "constructor"]);

const EMPTY: ToolDataChannel<unknown> = Object.freeze({ records: Object.freeze([]) as readonly never[] });

/**
 * Groups a tool part's data as renderers read it: `data.progress.records`. Channels are not
 * declared on the client, so a channel nobody wrote yet reads as empty instead of undefined.
 */
export function toRenderData(data: ToolDataView): Record<string, ToolDataChannel<unknown>> {
  const channels: Record<string, ToolDataChannel<unknown>> = {};
  for (const [channel, records] of Object.entries(data)) {
    if (records) channels[channel] = { records: records as readonly ToolDataItemView<unknown>[] };
  }
  return new Proxy(channels, {
    get(target, key, receiver) {
      if (typeof key === "string" && !PROBES.has(key) && !Object.hasOwn(target, key)) return EMPTY;
      return Reflect.get(target, key, receiver);
    },
  });
}
