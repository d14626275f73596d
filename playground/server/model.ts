import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { PaiError } from "@pai/core";
import { demoModel } from "./demo-model.js";

export type ModelChoice = { model: LanguageModelV4; label: string };

/**
 * The playground's model: the deterministic demo model, unless `OPENAI_BASE_URL` and
 * `PAI_MODEL` are set (plus `OPENAI_API_KEY` when the endpoint needs one), in which case any
 * OpenAI-compatible chat endpoint is used (OpenAI, Ollama, LM Studio, vLLM, OpenRouter, ...).
 */
export function chooseModel(env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const baseURL = env.OPENAI_BASE_URL?.trim();
  const modelId = env.PAI_MODEL?.trim();
  if (!baseURL && !modelId) return { model: demoModel(), label: "demo model (deterministic, no API key)" };
  if (!baseURL || !modelId) {
    throw new PaiError(
      "INVALID_DEFINITION",
      "To use a real model set both OPENAI_BASE_URL (e.g. https://api.openai.com/v1) and PAI_MODEL (e.g. gpt-4o-mini), plus OPENAI_API_KEY if the endpoint needs one. Unset both to use the demo model.",
    );
  }
  const apiKey = env.OPENAI_API_KEY?.trim();
  const provider = createOpenAICompatible({
    name: "openai-compatible",
    baseURL,
    ...(apiKey ? { apiKey } : {}),
  });
  return { model: provider.chatModel(modelId), label: `${modelId} at ${baseURL}` };
}
