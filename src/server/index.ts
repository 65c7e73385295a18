export { createServer, startServer, DEFAULT_BODY_LIMIT } from './server.ts';
export type { ServerOptions, RunningServer } from './server.ts';
export type {
  RecallApi,
  RuntimeView,
  RowView,
  DailyRowView,
  ConversationView,
  ChatResult,
  ToolCallView,
} from './services.ts';
export { ID_RULE, isValidId } from '../recall/index.ts';
export { HttpError, RequestValidationError, type ValidationIssue } from './http-errors.ts';
export { ConfigError } from './config-error.ts';
export {
  loadLlmSettings,
  describeLlm,
  DEFAULT_MODEL,
  DEFAULT_TEMPERATURE,
  DEFAULT_LLM_TIMEOUT_MS,
  DEFAULT_LLM_MAX_RETRIES,
  type LlmSettings,
} from './llm-config.ts';
export { parseCliOptions, HELP_TEXT, type CliOptions } from './cli-options.ts';
