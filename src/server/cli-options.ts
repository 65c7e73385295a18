/**
 * The `mnemo` command's options. Each comes from its flag, else its environment variable,
 * else its default:
 *
 *   --host <addr>        MNEMO_HOST        127.0.0.1     loopback only unless you say otherwise
 *   --port <n>           MNEMO_PORT        8000          0 picks a free port
 *   --data-dir <path>    MNEMO_DATA_DIR    ./data        LMDB environment (created if absent)
 *   --token <secret>     MNEMO_TOKEN       (none)        require `Authorization: Bearer` on /api
 *   --llm-config <path>  MNEMO_LLM_CONFIG  config/llm.yaml  (a missing default file is fine)
 *
 * Relative paths are resolved against the working directory. An empty environment variable
 * counts as unset.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from './config-error.ts';

export interface CliOptions {
  host: string;
  port: number;
  dataDir: string;
  token: string | null;
  llmConfigPath: string;
  /** Whether the LLM config path was asked for (then it must exist). */
  llmConfigExplicit: boolean;
  help: boolean;
  version: boolean;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8000;
export const DEFAULT_LLM_CONFIG = 'config/llm.yaml';

export const HELP_TEXT = `mnemo: durable, supervised conversation memory for AI agents (HTTP API and chat page)

Usage: mnemo [options]

Options (flag, else environment variable, else default):
  --host <addr>         MNEMO_HOST         address to listen on            [127.0.0.1]
  --port <n>            MNEMO_PORT         port, 0 for any free port       [8000]
  --data-dir <path>     MNEMO_DATA_DIR     LMDB data directory             [./data]
  --token <secret>      MNEMO_TOKEN        require "Authorization: Bearer <secret>" on /api/*
  --llm-config <path>   MNEMO_LLM_CONFIG   LLM config file                 [config/llm.yaml]
  -h, --help                               print this help and exit
  -v, --version                            print Mnemo's version and exit

LLM (OpenAI-compatible chat completions). Each setting comes from its environment variable,
else from the config file (llm: { api_key, model, base_url }), else its default:
  OPENAI_API_KEY    llm.api_key    no key: the offline fallback replies, no network
  OPENAI_BASE_URL   llm.base_url   the OpenAI API
  OPENAI_MODEL      llm.model      gpt-4o-mini

Stop with SIGINT (Ctrl-C) or SIGTERM: the server stops accepting, turns in flight finish,
storage is flushed and closed. A second signal exits at once.
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
        token: { type: 'string' },
        'llm-config': { type: 'string' },
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

  const llmConfig = pick(values['llm-config'], 'MNEMO_LLM_CONFIG');
  return {
    host,
    port,
    dataDir: resolve(cwd, pick(values['data-dir'], 'MNEMO_DATA_DIR') ?? 'data'),
    token,
    llmConfigPath: resolve(cwd, llmConfig ?? DEFAULT_LLM_CONFIG),
    llmConfigExplicit: llmConfig !== undefined,
    help: values.help === true,
    version: values.version === true,
  };
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new ConfigError(`invalid port ${JSON.stringify(text)}: use an integer from 0 to 65535`);
  }
  return Number(text);
}
