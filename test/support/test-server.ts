import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmService } from '../../src/llm/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import type { ExtractionRetryOptions, FactsErrorHandler, RecallLimits, SupervisedRecall } from '../../src/recall/index.ts';
import type { WallClock } from '../../src/wall-clock.ts';
import { startServer, type RunningServer } from '../../src/server/index.ts';
import { createServerMetrics, type ServerMetrics } from '../../src/server/metrics.ts';
import type { EmbeddingsOptions } from '../../src/recall/embeddings/embeddings-options.ts';
import { http, type HttpOptions, type HttpResponse } from './http.ts';

/** A real runtime on a temp LMDB dir and a real server on 127.0.0.1:0 in front of it. */
export interface TestServer {
  url: string;
  dataDir: string;
  runtime: Runtime;
  recall: SupervisedRecall;
  server: RunningServer;
  /** The server's metrics, wired to the runtime's write path and the model as `mnemo` does. */
  metrics: ServerMetrics;
  /** One request, with `X-Mnemo-Request: 1` unless `options.headers` say otherwise. */
  request(method: string, path: string, options?: HttpOptions): Promise<HttpResponse>;
  /** Closes the server and the runtime; `keepData` leaves the dir for a restart. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

let started = 0;

export async function startTestServer(
  options: {
    llm?: LlmService;
    /** The facts model (judge and background extraction), and its retries. */
    factsLlm?: LlmService;
    extraction?: ExtractionRetryOptions;
    clock?: WallClock;
    token?: string;
    adminToken?: string;
    /** Token → user id. */
    userTokens?: Record<string, string>;
    trustUserHeader?: string;
    bodyLimit?: number;
    requestTimeoutMs?: number;
    stopTimeoutMs?: number;
    dataDir?: string;
    /** The runtime's name (its registered names' prefix); default a fresh `mnemo_test_<n>`. */
    name?: string;
    /** Recall's embeddings (hybrid search); default none. */
    embeddings?: EmbeddingsOptions;
    /** Recall's `onFactsError`; default its own (a console line). */
    onFactsError?: FactsErrorHandler;
    /** The server's log lines, each parsed, as written; default no log. */
    logLines?: Record<string, unknown>[];
    /** Recall's per-user limits; default recall's. */
    recallLimits?: RecallLimits;
    rateLimitPerMinute?: number;
    maxConcurrentTurns?: number;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'mnemo-server-'));
  // Runtimes register their names process-wide: each test server gets its own.
  // No LLM: the recall service's own offline mode (the demo's fallback replies and titles).
  const metrics = createServerMetrics();
  const runtime = await startRuntime({
    name: options.name ?? `mnemo_test_${++started}`,
    dataDir,
    storage: 'lmdb',
    observer: metrics.writeObserver,
    recall: {
      ...(options.llm === undefined ? {} : { llm: metrics.observeLlm(options.llm) }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.factsLlm === undefined ? {} : { factsLlm: metrics.observeLlm(options.factsLlm) }),
      ...(options.extraction === undefined ? {} : { extraction: options.extraction }),
      ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
      ...(options.onFactsError === undefined ? {} : { onFactsError: options.onFactsError }),
      ...(options.recallLimits === undefined ? {} : { limits: options.recallLimits }),
    },
  });
  const recall = runtime.recall;
  const server = await startServer({
    recall,
    runtime,
    host: '127.0.0.1',
    port: 0,
    token: options.token ?? null,
    adminToken: options.adminToken ?? null,
    userTokens: new Map(Object.entries(options.userTokens ?? {})),
    trustUserHeader: options.trustUserHeader ?? null,
    metrics,
    ...(options.logLines === undefined ? {} : { logger: { level: 'info', stream: { write: (line: string) => void options.logLines!.push(JSON.parse(line) as Record<string, unknown>) } } }),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.stopTimeoutMs === undefined ? {} : { stopTimeoutMs: options.stopTimeoutMs }),
    ...(options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute }),
    ...(options.maxConcurrentTurns === undefined ? {} : { maxConcurrentTurns: options.maxConcurrentTurns }),
  });
  return {
    url: server.url,
    dataDir,
    runtime,
    recall,
    server,
    metrics,
    // As a well-behaved client: X-Mnemo-Request on every request (cross-site-guard.ts); tests
    // of the guard itself call `http` without it.
    request: (method, path, requestOptions) =>
      http(server.url, method, path, { ...requestOptions, headers: { 'x-mnemo-request': '1', ...requestOptions?.headers } }),
    async close({ keepData = false } = {}) {
      await server.close();
      await runtime.stop();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
