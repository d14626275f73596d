export type { OtelPluginOptions } from "./otel-plugin.js";
export { otelPlugin, PAI_SPAN_NAMES } from "./otel-plugin.js";
