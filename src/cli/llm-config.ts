/**
 * Which LLM the server talks to. The config file is the demo's `config/llm.yaml`:
 *
 *   llm:
 *     api_key: sk-...      # empty or null: no key, use the offline fallback
 *     model: gpt-4o-mini
 *     base_url: https://api.openai.com/v1   # any OpenAI-compatible endpoint
 *
 * Each setting comes from its environment variable (`OPENAI_API_KEY`, `OPENAI_MODEL`,
 * `OPENAI_BASE_URL`; empty counts as unset), else from the file, else its default. Unlike the
 * demo, a YAML `api_key:` with no value means "no key" (the demo turned it into the string
 * "None" and then failed at the first request). Malformed YAML or a wrongly shaped `llm`
 * section is a `ConfigError`, not a silent fallback.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './cli-errors.ts';

export const DEFAULT_MODEL = 'gpt-4o-mini';

export type LlmSettings =
  | { kind: 'fallback' }
  | {
      kind: 'openai-compatible';
      apiKey: string;
      model: string;
      /** `undefined`: the OpenAI API. */
      baseURL: string | undefined;
      /** Where the key came from, for the startup log (the key itself is never logged). */
      keyFrom: 'env' | 'file';
    };

interface FileSettings {
  api_key?: string;
  model?: string;
  base_url?: string;
}

export function loadLlmSettings(options: {
  configPath: string;
  /** When true the file must exist; the default path may be absent. */
  required: boolean;
  env: NodeJS.ProcessEnv;
}): LlmSettings {
  const file = readConfigFile(options.configPath, options.required);
  const fromEnv = (name: string): string | undefined => {
    const v = options.env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const envKey = fromEnv('OPENAI_API_KEY');
  const apiKey = envKey ?? file.api_key;
  if (apiKey === undefined) return { kind: 'fallback' };
  return {
    kind: 'openai-compatible',
    apiKey,
    model: fromEnv('OPENAI_MODEL') ?? file.model ?? DEFAULT_MODEL,
    baseURL: fromEnv('OPENAI_BASE_URL') ?? file.base_url,
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
  if (!isRecord(llm)) throw new ConfigError(`${path}: "llm" must be a mapping of api_key, model, base_url`);
  const out: FileSettings = {};
  for (const key of ['api_key', 'model', 'base_url'] as const) {
    const value = llm[key];
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ConfigError(`${path}: llm.${key} must be a string`);
    }
    const text = String(value).trim();
    if (text !== '') out[key] = text;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The part of the settings that is safe to log. */
export function describeLlm(settings: LlmSettings): Record<string, string> {
  if (settings.kind === 'fallback') return { kind: 'fallback', note: 'no API key: offline replies' };
  return {
    kind: settings.kind,
    model: settings.model,
    baseURL: settings.baseURL ?? 'https://api.openai.com/v1',
    keyFrom: settings.keyFrom,
  };
}
