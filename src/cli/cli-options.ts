/**
 * The `mnemo` command's options. Each comes from its flag, else its environment variable,
 * else its default:
 *
 *   --host <addr>        MNEMO_HOST        127.0.0.1     loopback only unless you say otherwise
 *   --port <n>           MNEMO_PORT        8000          0 picks a free port
 *   --data-dir <path>    MNEMO_DATA_DIR    ./data        LMDB environment (created if absent)
 *   --postgres <url>     MNEMO_POSTGRES_URL (none)       PostgreSQL instead of LMDB (every server on one database)
 *   --token <secret>     MNEMO_TOKEN       (none)        require `Authorization: Bearer` on /api
 *   --admin-token <s>    MNEMO_ADMIN_TOKEN (none)        operator token: operator routes, any user
 *   --user-tokens <path> MNEMO_USER_TOKENS (none)        JSON/YAML token → user id (user-tokens-file.ts)
 *   --trust-user-header <name> MNEMO_TRUST_USER_HEADER (off)  a reverse proxy names the user (needs --token)
 *   --allow-open                           (off)         listen beyond loopback with no token at all
 *   --llm-config <path>  MNEMO_LLM_CONFIG  config/llm.yaml  (a missing default file is fine)
 *   --llm-timeout <ms>        MNEMO_LLM_TIMEOUT      llm.timeout, else 60000  (per model call attempt)
 *   --llm-max-retries <n>     MNEMO_LLM_MAX_RETRIES  llm.max_retries, else 2
 *   --facts-model <name|off>  MNEMO_FACTS_MODEL      llm.facts_model, else the chat model
 *   --request-timeout <ms>    MNEMO_REQUEST_TIMEOUT  30000  (headers and body must arrive in it: else 408)
 *   --stop-timeout <ms>       MNEMO_STOP_TIMEOUT     10000  (then turns in flight are cancelled)
 *   --language <zh|en|auto>   MNEMO_LANGUAGE         auto   (system prompt, titles, offline reply; auto: each turn its message's)
 *   --summary-tokens <n|off>  MNEMO_SUMMARY_TOKENS   500    (a session's rolling summary: when due, and its longest; off: none)
 *   --rate-limit <n>          MNEMO_RATE_LIMIT       600    (/api requests a minute per user; 0: none)
 *   --max-turns <n>           MNEMO_MAX_TURNS        4      (chat turns at once per user)
 *   --max-sessions <n>        MNEMO_MAX_SESSIONS     10000  (sessions per user)
 *   --max-forks <n>           MNEMO_MAX_FORKS        1000   (forks per session)
 *   --max-search-terms <n>    MNEMO_MAX_SEARCH_TERMS 128    (distinct terms of a search query)
 *   --embeddings-model <m>    MNEMO_EMBEDDINGS_MODEL     embeddings.model, else none (BM25 alone)
 *   --embeddings-base-url <u> MNEMO_EMBEDDINGS_BASE_URL  embeddings.base_url, else the chat's
 *   --embeddings-dimensions <n> MNEMO_EMBEDDINGS_DIMENSIONS  embeddings.dimensions, else the model's
 *   --embeddings-rpm <n>      MNEMO_EMBEDDINGS_RPM       embeddings.requests_per_minute, else 60
 *   (embeddings-config.ts reads the rest, and the key: MNEMO_EMBEDDINGS_API_KEY, else the chat's)
 *
 * Relative paths are resolved against the working directory. An empty environment variable
 * counts as unset. The tokens are best given in the environment: a command line shows in `ps`. `MNEMO_LOG_LEVEL` (default info) has no flag; `serve.ts` reads it.
 */
import {
  DEFAULT_MAX_CONCURRENT_TURNS,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_STOP_TIMEOUT_MS,
} from '../server/server-defaults.ts';
import type { RecallLimits } from '../recall/recall-limits.ts';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from './cli-errors.ts';
import { factsModelSetting } from './llm-config.ts';
import { isLanguageSetting, LANGUAGE_SETTINGS, type LanguageSetting } from '../language.ts';
import { DEFAULT_SUMMARY_TOKENS } from '../recall/recall-api.ts';
import type { EmbeddingsOverrides } from './embeddings-config.ts';

export interface CliOptions {
  host: string;
  port: number;
  dataDir: string;
  /** A PostgreSQL connection string: the memory and the layered memory there, not in `dataDir`. */
  postgres: string | null;
  token: string | null;
  adminToken: string | null;
  /** The user tokens file (read by main.ts with user-tokens-file.ts), absolute. */
  userTokensPath: string | null;
  /** Trusted-header mode: the proxy's header naming the user. */
  trustUserHeader: string | null;
  /** Listen beyond loopback even with the API open. */
  allowOpen: boolean;
  llmConfigPath: string;
  /** Whether the LLM config path was asked for (then it must exist). */
  llmConfigExplicit: boolean;
  /** Per model call attempt; `undefined`: the config file's, else its default. */
  llmTimeoutMs: number | undefined;
  /** `undefined`: the config file's, else its default. */
  llmMaxRetries: number | undefined;
  /** The long-term facts' model; `null`: off; `undefined`: the config file's, else the chat model. */
  factsModel: string | null | undefined;
  /** Time to receive a whole request (headers and body); then 408 and the connection closes. */
  requestTimeoutMs: number;
  /** After a stop signal, how long turns in flight may run before they are cancelled. */
  stopTimeoutMs: number;
  /** Of the system prompt, the title prompt, offline titles and the offline reply; `'auto'` (the default): each turn its message's. */
  language: LanguageSetting;
  /** Recall's rolling summaries: the o200k tokens that make one due and its longest; `null`: off. */
  summaryTokens: number | null;
  /** Over the config file's `embeddings` section (embeddings-config.ts). */
  embeddings: EmbeddingsOverrides;
  /** `/api` requests a minute per user; 0: no limit. */
  rateLimitPerMinute: number;
  /** Chat turns running at once per user. */
  maxConcurrentTurns: number;
  /** Recall's per-user limits that were set (the rest: recall's defaults). */
  recallLimits: RecallLimits;
  help: boolean;
  version: boolean;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8000;
export const DEFAULT_LLM_CONFIG = 'config/llm.yaml';

export const HELP_TEXT = `mnemo: durable, supervised conversation memory for AI agents (HTTP API and chat page)

Usage: mnemo [options]
       mnemo compact [--data-dir <path>]   compact a stopped server's data directory (--help there)
       mnemo mcp --user <id> [--data-dir <path>]   one user's memory as an MCP server on stdio (--help there)

Options (flag, else environment variable, else default):
  --host <addr>            MNEMO_HOST             address to listen on        [127.0.0.1]
  --port <n>               MNEMO_PORT             port, 0 for any free port   [8000]
  --data-dir <path>        MNEMO_DATA_DIR         LMDB data directory         [./data]
  --postgres <url>         MNEMO_POSTGRES_URL     store everything in this PostgreSQL database instead
                                                  (postgres://user:password@host:port/db; every server
                                                  pointed at it shares the memory)  [none: LMDB]
  --token <secret>         MNEMO_TOKEN            require "Authorization: Bearer <secret>" on /api/*
  --admin-token <s>        MNEMO_ADMIN_TOKEN      operator token: the operator routes (GET /metrics,
                                                  GET /api/runtime, /fact-extraction), any user  [none]
                                                  (give both tokens in the environment: a command
                                                  line is visible to other users in ps)
  --user-tokens <path>     MNEMO_USER_TOKENS      JSON or YAML file of token: user id; each token acts
                                                  for its own user_id only (another is 403); keep it
                                                  chmod 600; SIGHUP reloads it   [none]
  --trust-user-header <h>  MNEMO_TRUST_USER_HEADER  behind a reverse proxy that authenticates users:
                                                  a request with --token (the proxy's credential)
                                                  acts as the user named in header <h>   [off]
  --allow-open                                    listen on a non-loopback --host with no token  [off]
  --llm-config <path>      MNEMO_LLM_CONFIG       LLM config file             [config/llm.yaml]
  --llm-timeout <ms>       MNEMO_LLM_TIMEOUT      per model call attempt      [llm.timeout, else 60000]
  --llm-max-retries <n>    MNEMO_LLM_MAX_RETRIES  retries of a failed model call  [llm.max_retries, else 2]
  --facts-model <m|off>    MNEMO_FACTS_MODEL      model that judges new long-term facts and extracts
                                                  them from finished turns in the background; off:
                                                  keys and duplicate rules only  [llm.facts_model,
                                                  else the chat model]
  --request-timeout <ms>   MNEMO_REQUEST_TIMEOUT  a request's headers and body must arrive within it,
                                                  else 408 and the connection closes  [30000]
  --stop-timeout <ms>      MNEMO_STOP_TIMEOUT     after a stop signal, turns still running are
                                                  cancelled and stored as interrupted  [10000]
  --language <zh|en|auto>  MNEMO_LANGUAGE         language of the system prompt, the title prompt,
                                                  offline titles and the offline reply; auto: each
                                                  turn in its message's (Chinese when it has Han
                                                  characters or asks for 中文, else English); zh is
                                                  the Agent Memory Demo's  [auto]
  --summary-tokens <n|off> MNEMO_SUMMARY_TOKENS   a session's rolling summary (what the model gets of
                                                  its older part): made in the background once that
                                                  part passes n tokens, at most n long; off: none  [500]
  --embeddings-model <m>   MNEMO_EMBEDDINGS_MODEL embed rows for hybrid recall (BM25 + vectors, RRF)
                                                  with this model  [embeddings.model, else none]
  --embeddings-base-url <u> MNEMO_EMBEDDINGS_BASE_URL  its OpenAI-compatible endpoint
                                                  [embeddings.base_url, else the chat's base URL]
  --embeddings-dimensions <n> MNEMO_EMBEDDINGS_DIMENSIONS  vector size asked for  [the model's]
  --embeddings-rpm <n>     MNEMO_EMBEDDINGS_RPM   embedding requests per minute at most  [60]
  --rate-limit <n>         MNEMO_RATE_LIMIT       /api requests a minute per user, then 429; 0: none  [600]
  --max-turns <n>          MNEMO_MAX_TURNS        chat turns running at once per user, then 429  [4]
  --max-sessions <n>       MNEMO_MAX_SESSIONS     sessions per user, then 429  [10000]
  --max-forks <n>          MNEMO_MAX_FORKS        forks of one session, then 429  [1000]
  --max-search-terms <n>   MNEMO_MAX_SEARCH_TERMS distinct terms of a search query, then 422  [128]
  -h, --help                                      print this help and exit
  -v, --version                                   print Mnemo's version and exit

Logging (JSON lines on stdout):
  MNEMO_LOG_LEVEL   trace, debug, info, warn, error, fatal or silent   [info]
                    (debug adds a line per page, asset and /api/runtime request)

LLM (OpenAI-compatible chat completions). Each setting comes from its environment variable,
else from the config file (llm: { api_key, model, base_url, temperature, timeout,
max_retries, facts_model }), else its default:
  OPENAI_API_KEY    llm.api_key    no key (empty, null or None): the offline fallback, no network
  OPENAI_BASE_URL   llm.base_url   the OpenAI API
  OPENAI_MODEL      llm.model      gpt-4o-mini
                    llm.temperature  of replies (titles are asked at 0)  [0.2]

Stop with SIGINT (Ctrl-C) or SIGTERM: the server stops accepting, turns in flight finish (or,
after --stop-timeout, are cancelled and stored as interrupted), storage is flushed and closed.
A second signal, more than a second after the first, exits at once.
`;

export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        postgres: { type: 'string' },
        token: { type: 'string' },
        'admin-token': { type: 'string' },
        'user-tokens': { type: 'string' },
        'trust-user-header': { type: 'string' },
        'allow-open': { type: 'boolean' },
        'llm-config': { type: 'string' },
        'llm-timeout': { type: 'string' },
        'llm-max-retries': { type: 'string' },
        'facts-model': { type: 'string' },
        'request-timeout': { type: 'string' },
        'stop-timeout': { type: 'string' },
        language: { type: 'string' },
        'summary-tokens': { type: 'string' },
        'embeddings-model': { type: 'string' },
        'embeddings-base-url': { type: 'string' },
        'embeddings-dimensions': { type: 'string' },
        'embeddings-rpm': { type: 'string' },
        'rate-limit': { type: 'string' },
        'max-turns': { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-forks': { type: 'string' },
        'max-search-terms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (see --help)`);
  }
  const pick = (flag: string | undefined, name: string): string | undefined =>
    flag ?? (env[name] === undefined || env[name] === '' ? undefined : env[name]);

  const host = pick(values.host, 'MNEMO_HOST') ?? DEFAULT_HOST;
  if (host.trim() === '') throw new ConfigError('--host must not be empty');

  const portText = pick(values.port, 'MNEMO_PORT');
  const port = portText === undefined ? DEFAULT_PORT : parsePort(portText);

  const token = pick(values.token, 'MNEMO_TOKEN') ?? null;
  if (token !== null && !/^[\x21-\x7e]+$/.test(token)) {
    throw new ConfigError('the token must be printable ASCII without spaces (it travels in an HTTP header)');
  }

  const adminToken = pick(values['admin-token'], 'MNEMO_ADMIN_TOKEN') ?? null;
  if (adminToken !== null && !/^[\x21-\x7e]+$/.test(adminToken)) {
    throw new ConfigError('the admin token must be printable ASCII without spaces (it travels in an HTTP header)');
  }
  if (adminToken !== null && adminToken === token) throw new ConfigError('the admin token must differ from the API token');

  const userTokens = pick(values['user-tokens'], 'MNEMO_USER_TOKENS');
  const trustUserHeader = pick(values['trust-user-header'], 'MNEMO_TRUST_USER_HEADER') ?? null;
  if (trustUserHeader !== null) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(trustUserHeader) || /^(authorization|host|cookie|content-.*)$/i.test(trustUserHeader)) {
      throw new ConfigError(`invalid --trust-user-header ${JSON.stringify(trustUserHeader)}: use a header name such as X-Forwarded-User`);
    }
    if (token === null) throw new ConfigError('--trust-user-header needs --token: the proxy presents it, so a client that bypasses the proxy cannot name a user');
  }

  const llmConfig = pick(values['llm-config'], 'MNEMO_LLM_CONFIG');
  const whole = (flag: string, value: string | undefined, min: number): number | undefined => {
    if (value === undefined) return undefined;
    if (!/^\d{1,10}$/.test(value) || Number(value) < min) {
      throw new ConfigError(`invalid --${flag} ${JSON.stringify(value)}: use a whole number from ${min}`);
    }
    return Number(value);
  };
  const factsModel = pick(values['facts-model'], 'MNEMO_FACTS_MODEL');
  if (factsModel !== undefined && factsModelSetting(factsModel) === undefined) {
    throw new ConfigError('--facts-model must be a model name or off');
  }
  const language = pick(values.language, 'MNEMO_LANGUAGE') ?? 'auto';
  if (!isLanguageSetting(language)) {
    throw new ConfigError(`invalid --language ${JSON.stringify(language)}: use one of ${LANGUAGE_SETTINGS.join(', ')}`);
  }
  const summarySetting = pick(values['summary-tokens'], 'MNEMO_SUMMARY_TOKENS');
  const summaryTokens = summarySetting === 'off' ? null : (whole('summary-tokens', summarySetting, 1) ?? DEFAULT_SUMMARY_TOKENS);
  const recallLimits: RecallLimits = {};
  const sessionsPerUser = whole('max-sessions', pick(values['max-sessions'], 'MNEMO_MAX_SESSIONS'), 1);
  const forksPerSession = whole('max-forks', pick(values['max-forks'], 'MNEMO_MAX_FORKS'), 1);
  const searchTerms = whole('max-search-terms', pick(values['max-search-terms'], 'MNEMO_MAX_SEARCH_TERMS'), 1);
  if (sessionsPerUser !== undefined) recallLimits.sessionsPerUser = sessionsPerUser;
  if (forksPerSession !== undefined) recallLimits.forksPerSession = forksPerSession;
  if (searchTerms !== undefined) recallLimits.searchTerms = searchTerms;
  return {
    host,
    port,
    dataDir: resolve(cwd, pick(values['data-dir'], 'MNEMO_DATA_DIR') ?? 'data'),
    postgres: pick(values.postgres, 'MNEMO_POSTGRES_URL') ?? null,
    token,
    adminToken,
    userTokensPath: userTokens === undefined ? null : resolve(cwd, userTokens),
    trustUserHeader,
    allowOpen: values['allow-open'] === true,
    llmConfigPath: resolve(cwd, llmConfig ?? DEFAULT_LLM_CONFIG),
    llmConfigExplicit: llmConfig !== undefined,
    llmTimeoutMs: whole('llm-timeout', pick(values['llm-timeout'], 'MNEMO_LLM_TIMEOUT'), 1),
    llmMaxRetries: whole('llm-max-retries', pick(values['llm-max-retries'], 'MNEMO_LLM_MAX_RETRIES'), 0),
    factsModel: factsModel === undefined ? undefined : factsModelSetting(factsModel),
    requestTimeoutMs:
      whole('request-timeout', pick(values['request-timeout'], 'MNEMO_REQUEST_TIMEOUT'), 1) ?? DEFAULT_REQUEST_TIMEOUT_MS,
    stopTimeoutMs: whole('stop-timeout', pick(values['stop-timeout'], 'MNEMO_STOP_TIMEOUT'), 0) ?? DEFAULT_STOP_TIMEOUT_MS,
    language,
    summaryTokens,
    embeddings: {
      model: pick(values['embeddings-model'], 'MNEMO_EMBEDDINGS_MODEL'),
      baseURL: pick(values['embeddings-base-url'], 'MNEMO_EMBEDDINGS_BASE_URL'),
      dimensions: whole('embeddings-dimensions', pick(values['embeddings-dimensions'], 'MNEMO_EMBEDDINGS_DIMENSIONS'), 1),
      requestsPerMinute: whole('embeddings-rpm', pick(values['embeddings-rpm'], 'MNEMO_EMBEDDINGS_RPM'), 1),
    },
    rateLimitPerMinute: whole('rate-limit', pick(values['rate-limit'], 'MNEMO_RATE_LIMIT'), 0) ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    maxConcurrentTurns: whole('max-turns', pick(values['max-turns'], 'MNEMO_MAX_TURNS'), 1) ?? DEFAULT_MAX_CONCURRENT_TURNS,
    recallLimits,
    help: values.help === true,
    version: values.version === true,
  };
}

/**
 * Refuses (ConfigError) to listen beyond loopback with the API open (no shared token, no user
 * tokens): anyone who can reach the port could read and erase every conversation. `--allow-open`
 * overrides. `userTokens`: how many the file held.
 */
export function checkExposure(options: Pick<CliOptions, 'host' | 'token' | 'allowOpen'>, userTokens: number, isLoopback: (host: string) => boolean): void {
  if (options.allowOpen || isLoopback(options.host) || options.token !== null || userTokens > 0) return;
  throw new ConfigError(
    `refusing to listen on ${options.host} with the API open (no --token, no --user-tokens): anyone who can reach it ` +
      'could read every conversation; set a token, or pass --allow-open if that is what you want',
  );
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new ConfigError(`invalid port ${JSON.stringify(text)}: use an integer from 0 to 65535`);
  }
  return Number(text);
}
