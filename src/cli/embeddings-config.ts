/**
 * Whether the server embeds its rows (hybrid recall), and with what. From the flags (or their
 * variables, cli-options.ts), else the `embeddings` section of the LLM config file:
 *
 *   embeddings:
 *     model: text-embedding-3-small   # absent: no embeddings, BM25 alone
 *     base_url: http://127.0.0.1:8080/v1
 *     api_key: sk-...
 *     dimensions: 256
 *     requests_per_minute: 60
 *     batch_size: 64
 *
 * The model: `--embeddings-model` / `MNEMO_EMBEDDINGS_MODEL`, else `embeddings.model`; none:
 * embeddings off. The base URL: `--embeddings-base-url` / `MNEMO_EMBEDDINGS_BASE_URL`, else
 * `embeddings.base_url`, else the chat's (`OPENAI_BASE_URL`, else `llm.base_url`), else
 * OpenAI's. The key: `MNEMO_EMBEDDINGS_API_KEY`, else `embeddings.api_key`, else the chat's
 * (`OPENAI_API_KEY`, else `llm.api_key`), else none (`'none'` is sent: local servers ignore
 * it). `dimensions` and `requests_per_minute` also have flags. A wrong value is a
 * `ConfigError`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { EmbeddingsOptions } from '../recall/embeddings/embeddings-options.ts';
import { ConfigError } from './cli-errors.ts';

export interface EmbeddingsOverrides {
  model?: string | undefined;
  baseURL?: string | undefined;
  dimensions?: number | undefined;
  requestsPerMinute?: number | undefined;
}

export function loadEmbeddingsSettings(options: { configPath: string; env: NodeJS.ProcessEnv; overrides?: EmbeddingsOverrides }): EmbeddingsOptions | undefined {
  const doc = readDoc(options.configPath);
  const section = doc['embeddings'];
  if (section !== undefined && section !== null && !isRecord(section)) throw new ConfigError(`${options.configPath}: "embeddings" must be a mapping`);
  const file = isRecord(section) ? section : {};
  const llm = isRecord(doc['llm']) ? doc['llm'] : {};
  const env = (name: string) => {
    const v = options.env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const text = (from: Record<string, unknown>, key: string): string | undefined => {
    const v = from[key];
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw new ConfigError(`${options.configPath}: embeddings.${key} must be a string`);
    const t = String(v).trim();
    return t === '' || t === 'None' ? undefined : t;
  };
  const whole = (key: string, min: number): number | undefined => {
    const v = file[key];
    if (v === null || v === undefined || v === '') return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new ConfigError(`${options.configPath}: embeddings.${key} must be a whole number from ${min}, got ${JSON.stringify(v)}`);
    return v;
  };
  const model = options.overrides?.model ?? text(file, 'model');
  if (model === undefined) return undefined;
  const baseURL = options.overrides?.baseURL ?? text(file, 'base_url') ?? env('OPENAI_BASE_URL') ?? text(llm, 'base_url');
  const apiKey = env('MNEMO_EMBEDDINGS_API_KEY') ?? text(file, 'api_key') ?? env('OPENAI_API_KEY') ?? text(llm, 'api_key');
  const dimensions = options.overrides?.dimensions ?? whole('dimensions', 1);
  const requestsPerMinute = options.overrides?.requestsPerMinute ?? whole('requests_per_minute', 1);
  const batchSize = whole('batch_size', 1);
  return {
    model,
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(dimensions === undefined ? {} : { dimensions }),
    ...(requestsPerMinute === undefined ? {} : { requestsPerMinute }),
    ...(batchSize === undefined ? {} : { batchSize }),
  };
}

/** What is safe to log (never the key). */
export function describeEmbeddings(settings: EmbeddingsOptions | undefined): Record<string, string | number> {
  if (settings === undefined) return { kind: 'none', note: 'no embeddings model: BM25 alone' };
  return {
    model: settings.model,
    baseURL: settings.baseURL ?? 'https://api.openai.com/v1',
    ...(settings.dimensions === undefined ? {} : { dimensions: settings.dimensions }),
    requestsPerMinute: settings.requestsPerMinute ?? 60,
  };
}

function readDoc(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot parse ${path}: ${(err as Error).message}`);
  }
  return isRecord(doc) ? doc : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
