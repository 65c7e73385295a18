/**
 * The `mnemo` command (`npm start`, `bin/mnemo.js`): starts the runtime with LMDB under the
 * data dir and the HTTP API and chat page on it; `--help` lists the options.
 *
 * Logs are JSON lines (pino, through fastify) on stdout; the first line after startup says
 * where it listens and what it uses. On SIGINT/SIGTERM/SIGHUP it stops accepting, lets turns in
 * flight finish, then stops the runtime (which flushes and closes LMDB) and exits 0; a second
 * signal exits at once with 1. Bad options exit 2, a failed start exits 1.
 */
import { hostname } from 'node:os';
import { openAICompatible, type LlmService } from './llm/index.ts';
import { startRuntime } from './runtime.ts';
import {
  ConfigError,
  describeLlm,
  HELP_TEXT,
  loadLlmSettings,
  parseCliOptions,
  recallOnRuntime,
  startServer,
  type LlmSettings,
  type RunningServer,
} from './server/index.ts';

type Level = 'info' | 'warn' | 'error';
const LEVELS: Record<Level, number> = { info: 30, warn: 40, error: 50 };

/** Lines written before fastify's logger exists, in the same shape as pino's. */
function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), ...fields, msg });
  (level === 'info' ? process.stdout : process.stderr).write(`${line}\n`);
}

/** `undefined` for the offline mode: the recall service then uses the demo's fallback replies and titles. */
function llmService(settings: LlmSettings): LlmService | undefined {
  if (settings.kind === 'fallback') return undefined;
  return openAICompatible({
    apiKey: settings.apiKey,
    model: settings.model,
    ...(settings.baseURL === undefined ? {} : { baseURL: settings.baseURL }),
  });
}

async function main(): Promise<void> {
  let options;
  let llm: LlmSettings;
  try {
    options = parseCliOptions(process.argv.slice(2), process.env, process.cwd());
    if (options.help) {
      process.stdout.write(HELP_TEXT);
      return;
    }
    llm = loadLlmSettings({ configPath: options.llmConfigPath, required: options.llmConfigExplicit, env: process.env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`mnemo: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }

  // Signals count from here: one that arrives while starting stops the server right after.
  let pending: NodeJS.Signals | null = null;
  let onSignal = (signal: NodeJS.Signals): void => {
    if (pending !== null) {
      log('warn', 'second signal: exiting without a clean stop', { signal });
      process.exit(1);
    }
    pending = signal;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (s) => onSignal(s));

  const runtime = await startRuntime({ dataDir: options.dataDir, storage: 'lmdb' });
  const model = llmService(llm);
  const recall = recallOnRuntime(runtime, model === undefined ? {} : { llm: model });
  let server: RunningServer;
  try {
    server = await startServer({
      recall,
      runtime,
      token: options.token,
      host: options.host,
      port: options.port,
      logger: { level: process.env['MNEMO_LOG_LEVEL'] || 'info' },
    });
  } catch (err) {
    log('error', `cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`);
    await recall.close();
    await runtime.stop();
    process.exitCode = 1;
    return;
  }

  const logger = server.app.log;
  logger.info(
    {
      url: server.url,
      dataDir: options.dataDir,
      storage: 'lmdb',
      llm: describeLlm(llm),
      auth: options.token === null ? 'none' : 'bearer token',
      hostCheck: server.loopbackOnly ? 'loopback names only' : 'off',
    },
    `mnemo listening on ${server.url}`,
  );
  if (options.token === null && !server.loopbackOnly) {
    logger.warn('listening beyond loopback without a token: anyone who can reach this port can read every conversation');
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without a clean stop');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping: no new requests, finishing turns in flight');
    void (async () => {
      try {
        await server.close();
        await recall.close();
        await runtime.stop();
        logger.info('stopped cleanly');
        process.exitCode = 0;
      } catch (err) {
        logger.error({ err }, 'stop failed');
        process.exitCode = 1;
      }
      // Anything still holding the loop (a stuck socket, a timer) must not keep a stopped
      // server alive.
      setImmediate(() => process.exit());
    })();
  };
  onSignal = stop;
  if (pending !== null) stop(pending);
}

main().catch((err: unknown) => {
  log('error', `mnemo failed to start: ${err instanceof Error ? err.message : String(err)}`, {
    err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err,
  });
  process.exitCode = 1;
});
