/**
 * The server's Prometheus metrics (prom-client), on a registry of its own, so two servers or
 * runtimes in one process never share or collide:
 *
 *   mnemo_chat_turns_total{outcome}                  chat turns answered (`ok`, else the error code)
 *   mnemo_chat_turn_duration_seconds{outcome}        histogram of whole turns (POST /api/chat)
 *   mnemo_model_call_duration_seconds{outcome}       histogram of model calls (`ok`, else the LlmError code)
 *   mnemo_appends_total                              append calls committed
 *   mnemo_appended_messages_total                    records those appends stored
 *   mnemo_commit_batch_size                          histogram of append calls per commit (group commit)
 *   mnemo_live_conversations                         conversation actors alive (read at scrape time)
 *   mnemo_restarts_total{child}                      supervisor restarts (`conversation` for any conversation actor)
 *   mnemo_http_errors_total{code,status}             error answers by stable code
 *   mnemo_fact_extraction_jobs{state}                background fact extraction's jobs: `pending`
 *                                                    (queued), `retrying` (of those, failed before),
 *                                                    `dead` (failed every attempt); read at scrape time
 *   mnemo_embeddings_pending                         rows waiting in the embedding queue (read at scrape time)
 *   mnemo_embeddings_dead                            rows given up after `maxAttempts` (dead letters)
 *   mnemo_embeddings_requests{outcome}               embedding requests of the running drain (`ok`, `failed`;
 *                                                    a gauge: it restarts from 0 with the drain)
 *   mnemo_embeddings_embedded                        vectors the running drain stored
 *   mnemo_process_* / mnemo_nodejs_*                 prom-client's default process metrics (but
 *                                                    `nodejs_eventloop_lag_seconds`: see below)
 *
 * Hooks are plain calls on the paths that already exist: the write path's `WriteObserver`
 * (a commit), a wrapped `LlmService` (a model call), the chat route, the error handler and the
 * tree's event stream. No label carries a user, session or conversation id.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LlmService } from '../llm/llm-service.ts';
import type { WriteObserver } from '../memory/runtime/write-queue.ts';
import type { EventStream, TreeEvent } from '../otp/index.ts';
import { whereis } from '../otp/index.ts';
import { conversationSupName } from '../../supervisors/conversation-sup.ts';
import type { EmbeddingsStatus } from '../recall/queries/embeddings-status.ts';

/** Seconds: a turn or a model call spans milliseconds (offline) to a minute (a slow model). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** The server's Prometheus metrics (`GET /metrics`), from `createServerMetrics`. */
export interface ServerMetrics {
  /** The prom-client registry holding them. */
  readonly registry: Registry;
  /** Pass as `RuntimeOptions.observer`: counts appends and commit batch sizes. */
  readonly writeObserver: WriteObserver;
  /** `llm` timed per call (pass the result as the recall service's `llm`). */
  observeLlm(llm: LlmService): LlmService;
  /** A chat turn ended after `seconds` with `outcome` (`ok` or an error code). */
  turn(seconds: number, outcome: string): void;
  /** An error answer. */
  error(code: string, status: number): void;
  /** Read `count()` as the live conversation actors at every scrape. */
  trackLiveConversations(count: () => number): void;
  /** Read `status()` as the fact extraction jobs at every scrape. */
  trackExtraction(status: () => Promise<{ pending: number; retrying: number; dead: number }>): void;
  /** Read `status()` at every scrape for the `mnemo_embeddings_*` gauges (absent or unconfigured: not shown). */
  trackEmbeddings(status: () => Promise<EmbeddingsStatus>): void;
  /** Count the restarts `events` reports (conversation actors of runtime `name` as one child). */
  trackRestarts(events: EventStream<TreeEvent>, runtimeName: string | undefined): () => void;
  /** The exposition text and its content type. */
  scrape(): Promise<{
    /** The exposition format's content type. */
    contentType: string;
    /** The exposition text. */
    body: string;
  }>;
}

/**
 * A fresh metrics registry (with Node's default process metrics unless `defaultMetrics: false`).
 * Pass it as `ServerOptions.metrics`.
 */
export function createServerMetrics(options: { defaultMetrics?: boolean } = {}): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const turns = new Counter({ name: 'mnemo_chat_turns_total', help: 'Chat turns answered, by outcome', labelNames: ['outcome'], registers });
  const turnSeconds = new Histogram({
    name: 'mnemo_chat_turn_duration_seconds',
    help: 'Chat turn latency (POST /api/chat), by outcome',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const modelSeconds = new Histogram({
    name: 'mnemo_model_call_duration_seconds',
    help: 'Model call latency, by outcome (ok, else the LlmError code)',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const appends = new Counter({ name: 'mnemo_appends_total', help: 'Append calls committed', registers });
  const appended = new Counter({ name: 'mnemo_appended_messages_total', help: 'Records stored by committed appends', registers });
  const batch = new Histogram({
    name: 'mnemo_commit_batch_size',
    help: 'Append calls stored by one commit (group commit per conversation)',
    buckets: BATCH_BUCKETS,
    registers,
  });
  let liveCount: () => number = () => 0;
  new Gauge({
    name: 'mnemo_live_conversations',
    help: 'Conversation actors alive',
    registers,
    collect() {
      this.set(liveCount());
    },
  });
  let extraction: (() => Promise<{ pending: number; retrying: number; dead: number }>) | undefined;
  new Gauge({
    name: 'mnemo_fact_extraction_jobs',
    help: 'Background fact extraction jobs: pending (queued), retrying (of those, failed before), dead (failed every attempt)',
    labelNames: ['state'],
    registers,
    async collect() {
      if (extraction === undefined) return;
      // A recall service restarting or stopped: no sample rather than a failed scrape.
      const counts = await extraction().catch(() => undefined);
      if (counts === undefined) return;
      for (const state of ['pending', 'retrying', 'dead'] as const) this.set({ state }, counts[state]);
    },
  });
  let embeddings: (() => Promise<EmbeddingsStatus>) | undefined;
  const embeddingGauges = () => {
    const read = async (): Promise<EmbeddingsStatus> => (embeddings === undefined ? { configured: false } : embeddings().catch((): EmbeddingsStatus => ({ configured: false })));
    const gauge = (name: string, help: string, value: (s: Extract<EmbeddingsStatus, { configured: true }>, g: Gauge) => void, labelNames: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const s = await read();
          this.reset();
          if (s.configured) value(s, this);
        },
      });
    gauge('mnemo_embeddings_pending', 'Rows waiting in the embedding queue', (s, g) => g.set(s.pending));
    gauge('mnemo_embeddings_dead', 'Rows given up after maxAttempts (dead letters)', (s, g) => g.set(s.dead));
    gauge('mnemo_embeddings_requests', 'Embedding requests of the running drain, by outcome', (s, g) => {
      g.set({ outcome: 'ok' }, s.requests - s.failures);
      g.set({ outcome: 'failed' }, s.failures);
    }, ['outcome']);
    gauge('mnemo_embeddings_embedded', 'Vectors stored by the running drain', (s, g) => g.set(s.embedded));
  };
  embeddingGauges();
  const restarts = new Counter({
    name: 'mnemo_restarts_total',
    help: 'Supervisor restarts, by child (conversation actors counted as "conversation")',
    labelNames: ['child'],
    registers,
  });
  const errors = new Counter({
    name: 'mnemo_http_errors_total',
    help: 'Error answers, by stable code and HTTP status',
    labelNames: ['code', 'status'],
    registers,
  });
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: 'mnemo_' });
    // It waits a setImmediate at every scrape (a whole event-loop turn, most of a scrape's time
    // under load); the perf_hooks lag gauges (`_lag_mean_seconds`, `_lag_p99_seconds`, ...) stay.
    registry.removeSingleMetric('mnemo_nodejs_eventloop_lag_seconds');
  }

  // Unbound children (the observer is called per commit, the hot path).
  const appendsInc = appends.inc.bind(appends);
  const appendedInc = appended.inc.bind(appended);
  const batchObserve = batch.observe.bind(batch);

  return {
    registry,
    writeObserver: {
      committed(ops, messages) {
        appendsInc(ops);
        appendedInc(messages);
        batchObserve(ops);
      },
    },
    observeLlm(llm) {
      const timed = (started: number, outcome: string) => modelSeconds.observe({ outcome }, (performance.now() - started) / 1000);
      const observed: LlmService = {
        async chat(messages, chatOptions) {
          const started = performance.now();
          let outcome = 'ok';
          try {
            return await llm.chat(messages, chatOptions);
          } catch (error) {
            outcome = errorCode(error);
            throw error;
          } finally {
            timed(started, outcome);
          }
        },
      };
      const stream = llm.stream?.bind(llm);
      // A streamed call is timed from its request to its last event.
      if (stream) {
        observed.stream = async function* (messages, chatOptions) {
          const started = performance.now();
          let outcome = 'ok';
          try {
            yield* stream(messages, chatOptions);
          } catch (error) {
            outcome = errorCode(error);
            throw error;
          } finally {
            timed(started, outcome);
          }
        };
      }
      return observed;
    },
    turn(seconds, outcome) {
      turns.inc({ outcome });
      turnSeconds.observe({ outcome }, seconds);
    },
    error(code, status) {
      errors.inc({ code, status: String(status) });
    },
    trackLiveConversations(count) {
      liveCount = count;
    },
    trackExtraction(status) {
      extraction = status;
    },
    trackEmbeddings(status) {
      embeddings = status;
    },
    trackRestarts(events, runtimeName) {
      const supName = runtimeName === undefined ? undefined : conversationSupName(runtimeName);
      return events.subscribe((event) => {
        if (event.type !== 'restart') return;
        const conversation = supName !== undefined && whereis(supName) === event.supervisor;
        restarts.inc({ child: conversation ? 'conversation' : (event.id ?? '(anonymous)') });
      });
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** A thrown value's stable code (`MnemoError.code`), else `error`. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(code) ? code : 'error';
}
