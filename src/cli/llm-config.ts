/**
 * Which LLM the server talks to. The config file is the demo's `config/llm.yaml`:
 *
 *   llm:
 *     api_key: sk-...      # empty, null or None: no key, use the offline fallback
 *     model: gpt-4o-mini
 *     base_url: https://api.openai.com/v1   # any OpenAI-compatible endpoint
 *     temperature: 0.2     # of replies (titles are always asked at 0, as in the demo)
 *     timeout: 60000       # ms per model call attempt
 *     max_retries: 2       # retries of 408/409/429/5xx and connection errors
 *     facts_model: off     # long-term facts' model (judge, background extraction): a model
 *                          # name, or off; default the chat model above
 *
 * Each of the first three comes from its environment variable (`OPENAI_API_KEY`,
 * `OPENAI_MODEL`, `OPENAI_BASE_URL`; empty counts as unset), else from the file, else its
 * default; `timeout` and `max_retries` from the `--llm-timeout` / `--llm-max-retries` flags
 * (or their variables, see cli-options.ts), else the file, else the default; `facts_model` from
 * `--facts-model` / `MNEMO_FACTS_MODEL`, else the file, else the chat model (same key and base
 * URL; asked at temperature 0). `off` (or YAML `false`) turns facts' model calls off: keys and
 * duplicate rules alone, no extraction. With no key there is no facts model. Unlike the demo, a
 * YAML `api_key:` with no value, or the text `None` (what the demo turned it into, and then
 * sent as a key), means "no key"; the same holds for the other text settings. Malformed YAML,
 * a wrongly shaped `llm` section or an out-of-range number is a `ConfigError`, not a silent
 * fallback.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './cli-errors.ts';

export const DEFAULT_MODEL = 'gpt-4o-mini';
/** The demo's reply temperature (`ChatOpenAI(..., temperature=0.2)`). */
export const DEFAULT_TEMPERATURE = 0.2;
/** Per attempt, the openai client's own default would be 10 minutes. */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
export const DEFAULT_LLM_MAX_RETRIES = 2;

export type LlmSettings =
  | { kind: 'fallback' }
  | {
      kind: 'openai-compatible';
      apiKey: string;
      model: string;
      /** `undefined`: the OpenAI API. */
      baseURL: string | undefined;
      /** Of replies; titles are asked at 0. */
      temperature: number;
      /** Per model call attempt. */
      timeoutMs: number;
      maxRetries: number;
      /** The model that judges and extracts long-term facts; `null`: off. */
      factsModel: string | null;
      /** Where the key came from, for the startup log (the key itself is never logged). */
      keyFrom: 'env' | 'file';
    };

interface FileSettings {
  api_key?: string;
  model?: string;
  base_url?: string;
  temperature?: number;
  timeout?: number;
  max_retries?: number;
  /** `null`: off. */
  facts_model?: string | null;
}

/** What the command line may set over the file (flags or their environment variables). */
export interface LlmOverrides {
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** `null`: off; `undefined`: the file's, else the chat model. */
  factsModel?: string | null | undefined;
}

export function loadLlmSettings(options: {
  configPath: string;
  /** When true the file must exist; the default path may be absent. */
  required: boolean;
  env: NodeJS.ProcessEnv;
  overrides?: LlmOverrides;
}): LlmSettings {
  const file = readConfigFile(options.configPath, options.required);
  const fromEnv = (name: string): string | undefined => {
    const v = options.env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const envKey = fromEnv('OPENAI_API_KEY');
  const apiKey = envKey ?? file.api_key;
  if (apiKey === undefined) return { kind: 'fallback' };
  const model = fromEnv('OPENAI_MODEL') ?? file.model ?? DEFAULT_MODEL;
  const factsModel = options.overrides?.factsModel !== undefined ? options.overrides.factsModel : file.facts_model;
  return {
    kind: 'openai-compatible',
    apiKey,
    model,
    baseURL: fromEnv('OPENAI_BASE_URL') ?? file.base_url,
    temperature: file.temperature ?? DEFAULT_TEMPERATURE,
    timeoutMs: options.overrides?.timeoutMs ?? file.timeout ?? DEFAULT_LLM_TIMEOUT_MS,
    maxRetries: options.overrides?.maxRetries ?? file.max_retries ?? DEFAULT_LLM_MAX_RETRIES,
    factsModel: factsModel === undefined ? model : factsModel,
    keyFrom: envKey === undefined ? 'file' : 'env',
  };
}

function readConfigFile(path: string, required: boolean): FileSettings {
  if (!existsSync(path)) {
    if (required) throw new ConfigError(`LLM config file not found: ${path}`);
    return {};
  }
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot parse ${path}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw new ConfigError(`${path}: expected a mapping with an "llm" section`);
  const llm = doc['llm'];
  if (llm === null || llm === undefined) return {};
  if (!isRecord(llm)) {
    throw new ConfigError(`${path}: "llm" must be a mapping of api_key, model, base_url, temperature, timeout, max_retries, facts_model`);
  }
  const out: FileSettings = {};
  const facts = llm['facts_model'];
  if (facts === false) out.facts_model = null;
  else if (facts !== null && facts !== undefined) {
    if (typeof facts !== 'string') throw new ConfigError(`${path}: llm.facts_model must be a model name or off`);
    const name = factsModelSetting(facts);
    if (name !== undefined) out.facts_model = name;
  }
  for (const key of ['api_key', 'model', 'base_url'] as const) {
    const value = llm[key];
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ConfigError(`${path}: llm.${key} must be a string`);
    }
    const text = String(value).trim();
    // `None` is Python's null as the demo wrote it back (`str(None)`): not a value.
    if (text !== '' && text !== 'None') out[key] = text;
  }
  const temperature = numberSetting(path, llm, 'temperature', (n) => n >= 0 && n <= 2, 'a number from 0 to 2');
  if (temperature !== undefined) out.temperature = temperature;
  const timeout = numberSetting(path, llm, 'timeout', (n) => Number.isInteger(n) && n > 0, 'a whole number of milliseconds above 0');
  if (timeout !== undefined) out.timeout = timeout;
  const retries = numberSetting(path, llm, 'max_retries', (n) => Number.isInteger(n) && n >= 0, 'a whole number from 0');
  if (retries !== undefined) out.max_retries = retries;
  return out;
}

/** A facts model setting as written: `off` → null (off), blank or `None` → unset. */
export function factsModelSetting(text: string): string | null | undefined {
  const t = text.trim();
  if (t === '' || t === 'None') return undefined;
  return t.toLowerCase() === 'off' ? null : t;
}

function numberSetting(
  path: string,
  llm: Record<string, unknown>,
  key: string,
  valid: (n: number) => boolean,
  expected: string,
): number | undefined {
  const value = llm[key];
  if (value === null || value === undefined || value === '' || value === 'None') return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || !valid(value)) {
    throw new ConfigError(`${path}: llm.${key} must be ${expected}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The part of the settings that is safe to log. */
export function describeLlm(settings: LlmSettings): Record<string, string | number> {
  if (settings.kind === 'fallback') return { kind: 'fallback', note: 'no API key: offline replies' };
  return {
    kind: settings.kind,
    model: settings.model,
    baseURL: settings.baseURL ?? 'https://api.openai.com/v1',
    temperature: settings.temperature,
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    factsModel: settings.factsModel ?? 'off',
    keyFrom: settings.keyFrom,
  };
}
