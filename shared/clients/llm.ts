/**
 * The language model client: the official `openai` package against any OpenAI-compatible endpoint
 * (OpenAI, Ollama, vLLM, LM Studio) when LLM_PROVIDER=openai; none otherwise.
 */
import type OpenAI from 'openai';
import { config } from '../config.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

/** Loaded when a model is configured and first asked for: an API process without one never holds the package. */
const openai = loadOnFirstUse<typeof import('openai')>('openai');

let client: OpenAI | null | undefined;

/** The configured client, or null when no model is configured (LLM_PROVIDER unset or none). */
export function llmClient(): OpenAI | null {
  if (client === undefined) {
    const { provider, apiKey, baseUrl } = config().llm;
    client = provider === 'openai' ? new (openai().OpenAI)({ apiKey: apiKey || 'not-needed', baseURL: baseUrl, maxRetries: 2, timeout: 60_000 }) : null;
  }
  return client;
}

/** The configured model name. */
export function llmModel(): string {
  return config().llm.model;
}
