import { commit, commitRemoval, openRecallDbs, type RecallDbs, type RecallEnvironment } from '../storage/lmdb/recall-dbs.ts';
import { systemWallClock, type WallClock } from '../../wall-clock.ts';
import { vectorsChanged, type ItemKey, type QueueEntry } from '../storage/lmdb/embeddings/embed-dbs.ts';
import { itemText } from '../storage/lmdb/embeddings/embed-source.ts';
import { EmbeddingsError } from './embedding-errors.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from './embeddings-client.ts';
import type { ResolvedEmbeddingsOptions } from './embeddings-options.ts';
import { realTiming, tokenBucket, type Timing } from './rate-limiter.ts';
import { encodeVector, textHash } from './vector-codec.ts';

/**
 * The background drain of the embedding queue (embed-dbs.ts): takes up to `batchSize` queued
 * items in key order, reads their text as it is now (embed-source.ts), waits for the rate
 * limiter, asks the endpoint, and in ONE transaction stores each vector and removes its queue
 * entry. What makes a crash harmless: the queue entry goes only with its vector, so a drain
 * killed anywhere resumes from the queue as committed; a batch embedded but not committed is
 * asked again, and the vector, keyed by its item, is stored once whatever happened.
 *
 * At commit, an item whose queue entry vanished meanwhile (its row deleted, its user erased) is
 * not stored, and one whose text changed stays queued for the new text. Both are checked inside
 * the commit's transaction, which is what makes a user's erasure safe against a batch in flight
 * (the drain knows nothing of the erasure): the erasure removes the user's queue entries in its
 * own transaction, so a batch answered after it stores nothing of theirs; a row the user wrote
 * after the erasure is stored only with the vector of the text it holds now.
 *
 * Failures: every failed request counts an attempt on each item of its batch; a retryable one
 * (429, 5xx, timeout, connection) waits `retryBaseMs × 2^(n−1)` (n failures in a row, at most
 * 60 s) before the next request; an item failed `maxAttempts` times moves to the dead letters
 * (`recall.embed-dead`, counted in `status().dead`, queued again by a new write of its row). An
 * item that failed once is retried alone, so one bad input cannot sink a batch forever.
 *
 * Wakes on `kick()` (recall calls it when a write queued something) and every `pollMs`.
 */
export interface EmbeddingDrainOptions {
  env: RecallEnvironment;
  embeddings: ResolvedEmbeddingsOptions;
  /** Default: the `openai` client on `embeddings`. */
  client?: EmbeddingsClient;
  timing?: Timing;
  clock?: WallClock;
  /** Default 1000 ms. */
  pollMs?: number;
  /** An unexpected failure (storage): the drain has stopped. Default: retried after `pollMs`. */
  onCrash?: (error: unknown) => void;
}

export interface DrainStatus {
  /** Items waiting in the queue (all users). */
  pending: number;
  /** Items given up after `maxAttempts` (all users). */
  dead: number;
  /** Requests sent, failed requests among them, vectors stored, since this drain started. */
  requests: number;
  failures: number;
  embedded: number;
}

export interface EmbeddingDrain {
  kick(): void;
  /** Resolves once the queue is empty (every item embedded, gone or dead). */
  idle(): Promise<void>;
  status(): DrainStatus;
  /** Stops after the request in flight (its answer is not stored); resolves when stopped. */
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 60_000;

export function createEmbeddingDrain(options: EmbeddingDrainOptions): EmbeddingDrain {
  const dbs = openRecallDbs(options.env);
  const cfg = options.embeddings;
  const client = options.client ?? createEmbeddingsClient(cfg);
  const timing = options.timing ?? realTiming;
  const clock = options.clock ?? systemWallClock;
  const pollMs = options.pollMs ?? 1000;
  const limiter = tokenBucket(cfg.requestsPerMinute, cfg.burst, timing);
  const abort = new AbortController();
  const counts = { requests: 0, failures: 0, embedded: 0 };
  let closed = false;
  let wake: (() => void) | undefined;
  let idleWaiters: Array<() => void> = [];
  let failuresInARow = 0;

  const sleepOrKick = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      void timing.sleep(ms, abort.signal).then(resolve);
    }).finally(() => {
      wake = undefined;
    });

  async function step(): Promise<boolean> {
    const batch = take(dbs, cfg.batchSize);
    if (batch.length === 0) return false;
    const live: { key: ItemKey; text: string }[] = [];
    const gone: ItemKey[] = [];
    for (const item of batch) {
      const text = itemText(dbs, item.key[0], item.key[1], item.key[2]);
      if (text === undefined) gone.push(item.key);
      else live.push({ key: item.key, text });
    }
    if (live.length === 0) {
      await commitRemoval(dbs, () => {
        for (const key of gone) dbs.embed.queue.remove(key);
      });
      return true;
    }
    await limiter.take(abort.signal);
    if (closed) return false;
    counts.requests++;
    let vectors: Float32Array[];
    try {
      vectors = await client.embed(live.map((i) => i.text.slice(0, cfg.maxChars)), abort.signal);
    } catch (error) {
      if (closed) return false;
      counts.failures++;
      failuresInARow++;
      const failure = error instanceof EmbeddingsError ? error : new EmbeddingsError(String(error), true);
      await commit(dbs, () => {
        for (const key of gone) dbs.embed.queue.remove(key);
        for (const { key } of live) recordFailure(dbs, key, failure, cfg.maxAttempts, clock.now());
      });
      if (failure.retryable) await timing.sleep(Math.min(MAX_BACKOFF_MS, cfg.retryBaseMs * 2 ** (failuresInARow - 1)), abort.signal);
      return true;
    }
    failuresInARow = 0;
    if (closed) return false;
    const stored = await commit(dbs, () => {
      let n = 0;
      const users = new Set<string>();
      for (const key of gone) dbs.embed.queue.remove(key);
      live.forEach(({ key, text }, i) => {
        if (dbs.embed.queue.get(key) === undefined) return;
        const now = itemText(dbs, key[0], key[1], key[2]);
        if (now === undefined) {
          dbs.embed.queue.remove(key);
          return;
        }
        if (now !== text) return;
        dbs.embed.vectors.put(key, encodeVector(textHash(text), vectors[i]!));
        dbs.embed.queue.remove(key);
        users.add(key[0]);
        n++;
      });
      for (const u of users) vectorsChanged(dbs.counters, u);
      return n;
    });
    counts.embedded += stored;
    return true;
  }

  const done = (async () => {
    while (!closed) {
      let worked: boolean;
      try {
        worked = await step();
      } catch (error) {
        if (closed) break;
        if (options.onCrash) {
          options.onCrash(error);
          return;
        }
        await timing.sleep(pollMs, abort.signal);
        continue;
      }
      if (!worked && !closed) {
        for (const resolve of idleWaiters.splice(0)) resolve();
        await sleepOrKick(pollMs);
      }
    }
    for (const resolve of idleWaiters.splice(0)) resolve();
  })();

  return {
    kick() {
      // Called inside the writer's transaction: look once it has had time to commit.
      if (wake) setTimeout(() => wake?.(), 5);
    },
    idle() {
      if (closed) return Promise.resolve();
      const p = new Promise<void>((resolve) => idleWaiters.push(resolve));
      wake?.();
      return p;
    },
    status() {
      return { pending: dbs.embed.queue.getCount(), dead: dbs.embed.dead.getCount(), ...counts };
    },
    async close() {
      closed = true;
      abort.abort();
      wake?.();
      await done;
    },
  };
}

function take(dbs: RecallDbs, batchSize: number): { key: ItemKey; entry: QueueEntry }[] {
  const out: { key: ItemKey; entry: QueueEntry }[] = [];
  for (const { key, value } of dbs.embed.queue.getRange({ limit: batchSize })) {
    // An item that failed before goes alone (one bad input must not fail its neighbours).
    if (value.attempts > 0) return out.length === 0 ? [{ key, entry: value }] : out;
    out.push({ key, entry: value });
  }
  return out;
}

function recordFailure(dbs: RecallDbs, key: ItemKey, error: EmbeddingsError, maxAttempts: number, now: number): void {
  const entry = dbs.embed.queue.get(key);
  if (entry === undefined) return;
  const attempts = entry.attempts + 1;
  if (attempts >= maxAttempts) {
    dbs.embed.queue.remove(key);
    dbs.embed.dead.put(key, { attempts, error: error.message, at: now });
  } else {
    dbs.embed.queue.put(key, { attempts, error: error.message });
  }
}
