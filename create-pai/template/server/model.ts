import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import { demoModel } from "./demo-model.ts";

export type ModelChoice = { model: LanguageModel; label: string };

/**
 * The app's model: OpenAI when OPENAI_API_KEY is set (OPENAI_MODEL picks the model, and
 * OPENAI_BASE_URL any OpenAI-compatible endpoint), else the deterministic demo model. Any AI SDK
 * provider works the same way: return its model here.
 */
export function chooseModel(env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const apiKey = env.OPENAI_API_KEY?.trim();
  if (!apiKey) return { model: demoModel(), label: "demo model (deterministic, no API key)" };
  const modelId = env.OPENAI_MODEL?.trim() || "gpt-4.1-mini";
  const baseURL = env.OPENAI_BASE_URL?.trim();
  const openai = createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) });
  // Compatible endpoints (Ollama, vLLM, OpenRouter...) speak chat completions.
  return {
    model: baseURL ? openai.chat(modelId) : openai(modelId),
    label: `${modelId}${baseURL ? ` at ${baseURL}` : " (OpenAI)"}`,
  };
}
