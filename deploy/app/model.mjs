// Which model the app uses: an OpenAI-compatible endpoint when OPENAI_API_KEY is set, else the
// deterministic demo model (a `scriptedModel` from `@pai/core/testing`, answering with `demoStep`).

import { demoStep } from "./agent.mjs";

/**
 * Reads OPENAI_API_KEY, OPENAI_BASE_URL (default https://api.openai.com/v1) and PAI_MODEL
 * (default gpt-4o-mini). Without a key the demo model answers; it needs no network, so the
 * Compose stack and the deployment test run without secrets.
 */
export async function chooseModel(env = process.env) {
  const apiKey = env.OPENAI_API_KEY?.trim();
  if (!apiKey) {
    const { scriptedModel } = await import("@pai/core/testing");
    return { model: scriptedModel(demoStep, { recordCalls: false }), label: "demo model (deterministic)" };
  }
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
  const baseURL = env.OPENAI_BASE_URL?.trim() || "https://api.openai.com/v1";
  const modelId = env.PAI_MODEL?.trim() || "gpt-4o-mini";
  const provider = createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey });
  return { model: provider.chatModel(modelId), label: `${modelId} at ${baseURL}` };
}
