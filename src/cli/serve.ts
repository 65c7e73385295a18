/**
 * What `mnemo` runs once its options are read: the runtime (LMDB under the data dir), the
 * recall service and the HTTP server, then a graceful stop on SIGINT/SIGTERM; SIGHUP reloads
 * the user tokens file.
 *
 * - The first log line after startup says where it listens and what it uses (data dir,
 *   storage, LLM or offline fallback, auth, host check); the API key is never logged.
 * - Stop: the server stops accepting and answers the turns in flight (those still running
 *   after `--stop-timeout` are cancelled and stored as interrupted), the runtime stops (the
 *   recall service waits for its running calls first) (conversation actors commit, LMDB is
 *   flushed and closed); then exit 0. A second signal exits at once with 1, unless it is the
 *   same signal within a second of the first: a terminal's Ctrl-C reaches every process of
 *   `npm start` and npm forwards it again, which is one request to stop, not two. A signal
 *   that arrives while starting stops right after the start.
 * - SIGHUP: the `--user-tokens` file is read again and its tokens replace those in use for
 *   every request from then on, without a restart. A file that fails (unreadable, invalid, a
 *   token equal to --token or --admin-token) changes nothing and is logged with why; a file
 *   its group or others may read is logged as a warning, as at start. One that arrives while
 *   starting reloads right after the start.
 */
import { hostname } from 'node:os';
import { startRuntime } from '../runtime.ts';
import type { CliOptions } from './cli-options.ts';
import { describeLlm, type LlmSettings } from './llm-config.ts';
import { modelServices } from './model-services.ts';
import { describeEmbeddings } from './embeddings-config.ts';
import type { EmbeddingsOptions } from '../recall/embeddings/embeddings-options.ts';
import { startServer, type RunningServer } from '../server/server.ts';
import { createServerMetrics } from '../server/metrics.ts';
import { readUserTokensFile } from './user-tokens-file.ts';

type Level = 'info' | 'warn' | 'error';
const LEVELS: Record<Level, number> = { info: 30, warn: 40, error: 50 };

/** A log line written before fastify's logger exists, in the same shape as pino's. */
export function logLine(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), ...fields, msg });
  (level === 'info' ? process.stdout : process.stderr).write(`${line}\n`);
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** A repeat of the first stop signal within this is the same stop (see above). */
const REPEAT_WINDOW_MS = 1_000;

/** What the startup line says about who may call the API. */
export function describeAuth(options: Pick<CliOptions, 'token' | 'adminToken' | 'trustUserHeader'>, userTokens: number): string {
  const parts: string[] = [];
  if (options.trustUserHeader !== null) parts.push(`trusted header ${options.trustUserHeader} with the proxy's bearer token`);
  else if (options.token !== null) parts.push('bearer token');
  if (userTokens > 0) parts.push(`${userTokens} user token${userTokens === 1 ? '' : 's'}`);
  if (options.adminToken !== null) parts.push('admin token');
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export async function serve(
  options: CliOptions,
  llm: LlmSettings,
  userTokens: ReadonlyMap<string, string> = new Map(),
  embeddings?: EmbeddingsOptions,
): Promise<void> {
  let first: { signal: NodeJS.Signals; at: number } | null = null;
  /** Whether this signal is a second request to stop (not the first, nor its echo). */
  const isSecond = (signal: NodeJS.Signals): boolean => {
    if (first === null) {
      first = { signal, at: Date.now() };
      return false;
    }
    return !(signal === first.signal && Date.now() - first.at < REPEAT_WINDOW_MS);
  };
  let pending: NodeJS.Signals | null = null;
  let onSignal = (signal: NodeJS.Signals): void => {
    if (isSecond(signal)) {
      logLine('warn', 'second signal: exiting without a clean stop', { signal });
      process.exit(1);
    }
    pending ??= signal;
  };
  for (const signal of STOP_SIGNALS) process.on(signal, (s) => onSignal(s));
  // Handled from the first moment: SIGHUP's default action would end the process.
  let hangupWhileStarting = false;
  let onHangup = (): void => {
    hangupWhileStarting = true;
  };
  process.on('SIGHUP', () => onHangup());

  // One registry for the server, the runtime's write path and the model calls.
  const metrics = createServerMetrics();
  // The facts model's failures, whole (the provider's words included), go to the log only:
  // a fact's judge_error and a job's last_error keep a code and Mnemo's own sentence.
  let logFactsError = (error: unknown, task: 'judge' | 'extraction'): void =>
    logLine('warn', `the facts model failed (${task})`, { err: error instanceof Error ? { type: error.name, message: error.message } : String(error) });
  // Offline (no key): neither; the facts model is the chat model unless configured otherwise.
  const models = modelServices(llm, (service) => metrics.observeLlm(service));
  const runtime = await startRuntime({
    dataDir: options.dataDir,
    // PostgreSQL: the memory and the layered memory in that database (shared by every server on it).
    storage: options.postgres === null ? 'lmdb' : { postgres: options.postgres },
    observer: metrics.writeObserver,
    recall: {
      language: options.language,
      summary: options.summaryTokens === null ? false : { maxTokens: options.summaryTokens },
      onFactsError: (error, task) => logFactsError(error, task),
      ...models,
      ...(embeddings === undefined ? {} : { embeddings }),
      limits: options.recallLimits,
    },
  });
  let server: RunningServer;
  try {
    server = await startServer({
      recall: runtime.recall,
      runtime,
      token: options.token,
      adminToken: options.adminToken,
      userTokens,
      trustUserHeader: options.trustUserHeader,
      host: options.host,
      port: options.port,
      requestTimeoutMs: options.requestTimeoutMs,
      stopTimeoutMs: options.stopTimeoutMs,
      rateLimitPerMinute: options.rateLimitPerMinute,
      maxConcurrentTurns: options.maxConcurrentTurns,
      logger: { level: process.env['MNEMO_LOG_LEVEL'] || 'info' },
      metrics,
    });
  } catch (err) {
    await runtime.stop();
    throw err;
  }

  const logger = server.app.log;
  logFactsError = (error, task) => logger.warn({ err: error, task }, 'the facts model failed');
  logger.info(
    {
      url: server.url,
      ...(options.postgres === null ? { dataDir: options.dataDir, storage: 'lmdb' } : { storage: 'postgres' }),
      llm: describeLlm(llm),
      embeddings: describeEmbeddings(embeddings),
      auth: describeAuth(options, userTokens.size),
      hostCheck: server.loopbackOnly ? 'loopback names only' : 'off',
      language: options.language,
    },
    `mnemo listening on ${server.url}`,
  );
  if (options.token === null && userTokens.size === 0 && !server.loopbackOnly) {
    logger.warn('listening beyond loopback without a token: anyone who can reach this port can read every conversation');
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    const second = isSecond(signal);
    if (stopping) {
      if (!second) return;
      logger.warn({ signal }, 'second signal: exiting without a clean stop');
      process.exit(1);
    }
    stopping = true;
    logger.info(
      { signal, stopTimeoutMs: options.stopTimeoutMs },
      'stopping: no new requests, finishing turns in flight',
    );
    void (async () => {
      try {
        await server.close();
        await runtime.stop();
        logger.info('stopped cleanly');
        process.exitCode = 0;
      } catch (err) {
        logger.error({ err }, 'stop failed');
        process.exitCode = 1;
      }
      // A stuck socket or a stray timer must not keep a stopped server alive.
      setImmediate(() => process.exit());
    })();
  };
  onSignal = stop;
  onHangup = () => {
    if (stopping) return;
    const path = options.userTokensPath;
    if (path === null) {
      logger.warn({ signal: 'SIGHUP' }, 'SIGHUP: there is no --user-tokens file to reload');
      return;
    }
    try {
      const loaded = readUserTokensFile(path, options);
      server.replaceUserTokens(loaded.tokens);
      for (const warning of loaded.warnings) logger.warn({ signal: 'SIGHUP' }, warning);
      logger.info({ signal: 'SIGHUP', userTokens: loaded.tokens.size }, 'reloaded the user tokens file');
    } catch (err) {
      logger.error({ signal: 'SIGHUP', reason: err instanceof Error ? err.message : String(err) }, 'the user tokens file was not reloaded: the tokens in use stay');
    }
  };
  if (pending !== null) stop(pending);
  else if (hangupWhileStarting) onHangup();
}
