import { fallbackLlm } from './fallback-llm.ts';
import { openAICompatible } from './openai-compatible.ts';
import type { LlmService } from './llm-service.ts';

/**
 * The service a program gets with no configuration: the OpenAI-compatible adapter when
 * `OPENAI_API_KEY` is set (with `OPENAI_BASE_URL`, default OpenAI's, and `OPENAI_MODEL`,
 * default `gpt-4o-mini`, the demo's default), else the offline fallback, answering each message
 * in its own language (`'auto'`, as the `mnemo` command does).
 */
export function llmFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LlmService {
  const apiKey = env['OPENAI_API_KEY'];
  if (!apiKey) return fallbackLlm({ language: 'auto' });
  return openAICompatible({
    apiKey,
    model: env['OPENAI_MODEL'] || 'gpt-4o-mini',
    ...(env['OPENAI_BASE_URL'] ? { baseURL: env['OPENAI_BASE_URL'] } : {}),
  });
}
