/**
 * `mnemo mcp --data-dir DIR --user ID`: one user's memory as an MCP server over stdio, for a
 * desktop agent host (Claude Desktop, Cursor, ...), which starts it as a child process and
 * speaks JSON-RPC on its stdin and stdout (src/mcp/mcp-server.ts has the tools and resources).
 *
 * It opens the data directory itself, as `mnemo` does (LMDB, durable across restarts): one
 * process holds a directory, so a directory a running server holds is refused
 * (`data_dir_locked`, exit 1); an agent host then uses that server's `/mcp` instead. The model
 * settings are `mnemo`'s (`--llm-config`, the OPENAI_* variables): the facts model judges new
 * facts and extracts them in the background, embeddings rank hybrid; without a key, neither.
 *
 * stdout carries the protocol only: messages for people go to stderr. It stops cleanly (the
 * runtime flushes and closes) when the host closes stdin, or on SIGINT/SIGTERM; exit 0. Bad
 * options exit 2 (ConfigError), a failed start 1.
 */
import { resolve } from 'node:path';
import { ConfigError, parseFlags } from './cli-errors.ts';
import { DEFAULT_LLM_CONFIG } from './cli-options.ts';
import { isLanguageSetting, LANGUAGE_SETTINGS, type LanguageSetting } from '../language.ts';
import { isValidId } from '../recall/recall-ids.ts';

export const MCP_HELP = `Usage: mnemo mcp --user <id> [--data-dir <path>] [--language <zh|en|auto>] [--llm-config <path>]

Serves one user's memory as an MCP server over stdio (for Claude Desktop, Cursor and other
agent hosts): tools search_memory, remember, update_memory, forget, list_sessions,
get_session_window, get_daily_window; resources mnemo://facts and mnemo://sessions/{id}.
A data directory that a running server holds is refused: use that server's /mcp instead.

  --user <id>          MNEMO_MCP_USER   the user whose memory is served (required)
  --data-dir <path>    MNEMO_DATA_DIR   LMDB data directory   [./data]
  --language <zh|en|auto> MNEMO_LANGUAGE language of titles and of the tools' texts; auto:
                                        each message's (as the server's)   [auto]
  --llm-config <path>  MNEMO_LLM_CONFIG the facts model and embeddings   [config/llm.yaml]
  -h, --help                            print this help and exit
`;

export interface McpCommandOptions {
  dataDir: string;
  userId: string;
  language: LanguageSetting;
  llmConfigPath: string;
  llmConfigExplicit: boolean;
  help: boolean;
}

export function parseMcpOptions(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): McpCommandOptions {
  const values = parseFlags(argv, {
    user: { type: 'string' },
    'data-dir': { type: 'string' },
    language: { type: 'string' },
    'llm-config': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  }, 'mnemo mcp');
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const help = values.help === true;
  const userId = pick(values.user, 'MNEMO_MCP_USER') ?? '';
  if (!help && !isValidId(userId)) throw new ConfigError(userId === '' ? 'mnemo mcp needs --user <id>' : `invalid --user ${JSON.stringify(userId)}`);
  const language = pick(values.language, 'MNEMO_LANGUAGE') ?? 'auto';
  if (!isLanguageSetting(language)) throw new ConfigError(`invalid --language ${JSON.stringify(language)}: use one of ${LANGUAGE_SETTINGS.join(', ')}`);
  const llmConfig = pick(values['llm-config'], 'MNEMO_LLM_CONFIG');
  return {
    dataDir: resolve(cwd, pick(values['data-dir'], 'MNEMO_DATA_DIR') ?? 'data'),
    userId,
    language,
    llmConfigPath: resolve(cwd, llmConfig ?? DEFAULT_LLM_CONFIG),
    llmConfigExplicit: llmConfig !== undefined,
    help,
  };
}

/** Runs the command until stdin closes or a stop signal; resolves with the exit code. */
export async function runMcp(options: McpCommandOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  const { loadLlmSettings } = await import('./llm-config.ts');
  const { loadEmbeddingsSettings } = await import('./embeddings-config.ts');
  const { modelServices } = await import('./model-services.ts');
  const llm = loadLlmSettings({ configPath: options.llmConfigPath, required: options.llmConfigExplicit, env: process.env });
  const embeddings = loadEmbeddingsSettings({ configPath: options.llmConfigPath, env: process.env });
  const { startRuntime } = await import('../runtime.ts');
  const { createMcpServer } = await import('../mcp/mcp-server.ts');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  let runtime;
  try {
    runtime = await startRuntime({
      dataDir: options.dataDir,
      storage: 'lmdb',
      recall: {
        language: options.language,
        ...modelServices(llm),
        ...(embeddings === undefined ? {} : { embeddings }),
        onFactsError: (error, task) => process.stderr.write(`mnemo: the facts model failed (${task}): ${error instanceof Error ? error.message : String(error)}\n`),
      },
    });
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    process.stderr.write(`mnemo: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? error)}\n`);
    return 1;
  }
  const server = createMcpServer({ recall: runtime.recall, userId: options.userId });
  const transport = new StdioServerTransport();
  const stopped = new Promise<void>((done) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void server.close().catch(() => undefined).finally(() => done());
    };
    // The host closed our stdin: it is done with us (the SDK's transport does not watch for it).
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    transport.onclose = stop;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stop);
  });
  await server.connect(transport);
  await stopped;
  await runtime.stop();
  return 0;
}
