/** The `mnemo` program's pieces, for tests and for embedding its option parsing. */
export { ConfigError } from './cli-errors.ts';
export {
  loadLlmSettings,
  describeLlm,
  DEFAULT_MODEL,
  DEFAULT_TEMPERATURE,
  DEFAULT_LLM_TIMEOUT_MS,
  DEFAULT_LLM_MAX_RETRIES,
  type LlmSettings,
} from './llm-config.ts';
export { parseCliOptions, checkExposure, HELP_TEXT, type CliOptions } from './cli-options.ts';
export { modelServices, type ModelServices } from './model-services.ts';
export { loadUserTokensFile, modeWarning, parseUserTokens, readUserTokensFile, RECOMMENDED_TOKEN_CHARS, type UserTokens } from './user-tokens-file.ts';
