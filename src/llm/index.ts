export type { ChatOptions, LlmResponse, LlmService, LlmStreamEvent, ToolChoice, ToolSpec, Usage } from './llm-service.ts';
export { LLM_ERROR_SENTENCES, LlmError, type LlmErrorCode } from './llm-errors.ts';
export { fallbackChunks, fallbackLlm, fallbackReply, isFallbackLlm } from './fallback-llm.ts';
export { openAICompatible, type OpenAICompatibleOptions } from './openai-compatible.ts';
export { llmFromEnv } from './llm-from-env.ts';
export { streamResponse } from './llm-stream.ts';
