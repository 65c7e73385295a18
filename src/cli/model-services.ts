/**
 * The model services `mnemo` gives the recall service, from its LLM settings (llm-config.ts):
 * `llm` for replies and titles, `factsLlm` for long-term facts (the judge and background
 * extraction) — the facts model (by default the chat model) on the same endpoint and key, at
 * temperature 0 since it must answer JSON. Offline (no key) neither exists, and
 * `facts_model: off` leaves `factsLlm` out. `observe` wraps each (the server's metrics).
 */
import { openAICompatible, type LlmService } from '../llm/index.ts';
import type { LlmSettings } from './llm-config.ts';

export interface ModelServices {
  llm?: LlmService;
  factsLlm?: LlmService;
}

export function modelServices(settings: LlmSettings, observe: (llm: LlmService) => LlmService = (llm) => llm): ModelServices {
  if (settings.kind === 'fallback') return {};
  const client = (model: string, temperature: number): LlmService =>
    observe(
      openAICompatible({
        apiKey: settings.apiKey,
        model,
        ...(settings.baseURL === undefined ? {} : { baseURL: settings.baseURL }),
        temperature,
        timeoutMs: settings.timeoutMs,
        maxRetries: settings.maxRetries,
      }),
    );
  return {
    llm: client(settings.model, settings.temperature),
    ...(settings.factsModel === null ? {} : { factsLlm: client(settings.factsModel, 0) }),
  };
}
