import { expect } from 'vitest';
import type { ErrorRecord } from '../../errors.ts';
import type { NewEntry } from '../../memory/contract/message-log.ts';
import type { StoredMessage } from '../../message.ts';
import type { NewSummary } from '../../provider/summary-record.ts';
import type { WallClock } from '../../wall-clock.ts';
import { addFact } from '../facts/fact-rules.ts';
import { FactsCache, FactsWork, loadFacts } from '../facts/facts-view.ts';
import { averageLength, bm25Idf, bm25Term } from '../search/bm25.ts';
import { docTerms } from '../search/documents.ts';
import type { RankedDoc, RecallStore, TurnSideWrites, WriteGuard } from '../storage/recall-store.ts';
import { StaleWriteError } from '../storage/stale-write-error.ts';

/**
 * The fixtures of the storage port's conformance suite (recall-store-contract.ts): the factory's
 * types, a clock the suite moves by hand, a fresh store per test, and inputs built as the domain
 * builds them (a turn as `recordTurn` appends it, a facts change from the facts rules, BM25 scores
 * from search/bm25.ts). Nothing here knows an engine.
 */

/** What the suite hands the factory of each test's store. */
export interface RecallStoreContractOptions {
  /**
   * The store's time (job due times, leases, `queuedAt`): the suite moves it forward by hand. An
   * engine that reckons queue time by its database's clock may ignore it (the suite also waits
   * out every advance in real time; see recall-store-contract.ts, TIME).
   */
  clock: WallClock;
  /** Open the store with embeddings (stored items queue embedding jobs; `store.embeddings` true). */
  embeddings: boolean;
}

/** A store under test (`describeRecallStoreContract`), and how to dispose of it after each test. */
export interface RecallStoreUnderTest {
  /** A fresh, empty store. */
  store: RecallStore;
  /** Closes the store and what the factory opened for it (an environment, a schema); called once, after the test. */
  close: () => Promise<void>;
}

/** Makes a fresh, empty `RecallStore` for one test (see `RecallStoreContractOptions`). */
export type MakeRecallStore = (options: RecallStoreContractOptions) => Promise<RecallStoreUnderTest>;

/** Leases and retries the suite lets expire or fall due: short, so real-time waits stay short. */
export const SHORT_MS = 40;
/** Leases and retries that must not expire within a test. */
export const LONG_MS = 10 * 60_000;

/** A wall clock that moves only when told (from 2026-04-08T02:00:00Z). */
export interface HandClock extends WallClock {
  advance(ms: number): void;
}

export function handClock(): HandClock {
  let t = Date.parse('2026-04-08T02:00:00.000Z');
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

export interface Ctx {
  store: RecallStore;
  clock: HandClock;
  /** Moves the store's time past `ms`: the hand clock at once, and as long again in real time. */
  pass(ms: number): Promise<void>;
}

export async function withStore(make: MakeRecallStore, embeddings: boolean, body: (ctx: Ctx) => Promise<void>): Promise<void> {
  const clock = handClock();
  const made = await make({ clock, embeddings });
  const pass = async (ms: number) => {
    clock.advance(ms + 1_000);
    await new Promise((resolve) => setTimeout(resolve, ms + 10));
  };
  try {
    await body({ store: made.store, clock, pass });
  } finally {
    await made.close();
  }
}

export const ALICE = 'alice';
export const BOB = 'bob';
export const DAY1 = '2026-04-08';
export const DAY2 = '2026-04-09';

/** A turn as `recordTurn` (chat/record-turn.ts) appends it. */
export interface TurnInput {
  userId?: string;
  sessionId?: string;
  message: string;
  reply: string;
  day?: string;
  /** `HH:MM:SS` of the turn; default from a counter. */
  time?: string;
  title?: string;
  extract?: boolean;
  idempotencyKey?: string;
  toolCalls?: { name: string; input: string; output: string }[];
}

export let tick = 0;
export function timeOf(input: TurnInput): string {
  if (input.time !== undefined) return input.time;
  tick = (tick + 1) % 3600;
  return `10:${String(Math.floor(tick / 60)).padStart(2, '0')}:${String(tick % 60).padStart(2, '0')}`;
}

/** The side writes `recordTurn` gives the store for a turn's two rows. */
export function turnWrites(input: Required<Pick<TurnInput, 'userId' | 'sessionId'>> & TurnInput, ts: string, day: string) {
  return ([userRow, replyRow]: readonly StoredMessage[]): TurnSideWrites => {
    const { userId, sessionId, message, reply } = input;
    const messageIds = [userRow!.message_id, replyRow!.message_id];
    const toolCalls = input.toolCalls ?? [];
    const row = { day, ts, sessionId };
    return {
      daily: [
        { ...row, role: 'user', content: message, sessionMessageId: messageIds[0]! },
        { ...row, role: 'assistant', content: reply, sessionMessageId: messageIds[1]!, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
      ],
      log: { ts, sessionId, userMessage: message, assistantReply: reply, memoryContext: '', toolCalls },
      settles: true,
      jobs: input.extract ? [{ kind: 'extract', userId, payload: { sessionId, replyId: messageIds[1]!, userMessage: message, assistantReply: reply, messageIds } }] : [],
      touch: { title: input.title ?? message.slice(0, 20), updatedAt: ts },
    };
  };
}

export async function turn(store: RecallStore, input: TurnInput, guard?: WriteGuard) {
  const userId = input.userId ?? ALICE;
  const sessionId = input.sessionId ?? 's1';
  const day = input.day ?? DAY1;
  const ts = `${day}T${timeOf(input)}`;
  const entries: NewEntry[] = [
    { message: { role: 'user', content: input.message }, meta: { ts } },
    { message: { role: 'assistant', content: input.reply }, meta: { ts } },
  ];
  return store.appendTurn(
    {
      userId,
      sessionId,
      entries,
      ...(input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey }),
      opens: { now: ts },
      with: turnWrites({ ...input, userId, sessionId }, ts, day),
    },
    guard,
  );
}

export function summary(from: number, to: number, previous: number | null, text = `summary of 1-${to}`): NewSummary {
  return { text, from, to, previous, model: 'extractive', method: 'extractive', at: '2026-04-08T10:00:00.000+08:00' };
}

export async function sessionOrder(store: RecallStore, userId: string, sessionId: string): Promise<number> {
  const entry = await store.session(userId, sessionId);
  if (entry === undefined) throw new Error(`no session ${sessionId}`);
  return entry.order;
}

/** A facts change as the facts service computes it (facts-service.ts `factWrite`): rules applied to a fresh view. */
export async function factChange(store: RecallStore, userId: string, facts: { text: string; key?: string }[], now = '2026-04-08T02:00:00.000Z') {
  const view = await loadFacts(store, new FactsCache(), userId);
  const work = new FactsWork(view, now);
  for (const f of facts) addFact(work, { text: f.text, ...(f.key === undefined ? {} : { key: f.key }), source: { via: 'api' } });
  return { change: work.change(), generation: view.generation };
}

export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

export async function expectStale(p: Promise<unknown>, reason: StaleWriteError['reason']): Promise<void> {
  const error = await rejection(p);
  expect(error).toBeInstanceOf(StaleWriteError);
  expect((error as StaleWriteError).code).toBe('write_stale');
  expect((error as StaleWriteError).reason).toBe(reason);
}

/** BM25 as search/bm25.ts defines it over `docs` (the user's whole index), best first, ties by doc. */
export function expectedRanking(docs: { doc: number; text: string; passes: boolean }[], terms: readonly string[], limit: number): { doc: number; score: number }[] {
  const stats = docs.map((d) => ({ ...d, counts: docTerms(d.text) }));
  const total = stats.reduce((n, d) => n + d.counts.length, 0);
  const avg = averageLength(stats.length, total);
  const distinct = [...new Set(terms)];
  const idf = new Map(distinct.map((t) => [t, bm25Idf(stats.length, stats.filter((d) => d.counts.terms.has(t)).length)]));
  const scored: { doc: number; score: number }[] = [];
  for (const d of stats) {
    if (!d.passes) continue;
    let score = 0;
    let hit = false;
    for (const t of distinct) {
      const tf = d.counts.terms.get(t);
      if (tf === undefined) continue;
      hit = true;
      score += bm25Term(idf.get(t)!, tf, d.counts.length, avg);
    }
    if (hit) scored.push({ doc: d.doc, score });
  }
  return scored.sort((a, b) => b.score - a.score || a.doc - b.doc).slice(0, limit);
}

export function expectSameRanking(actual: RankedDoc[], expected: { doc: number; score: number }[]): void {
  expect(actual.map((d) => d.doc)).toEqual(expected.map((d) => d.doc));
  actual.forEach((d, i) => expect(d.score).toBeCloseTo(expected[i]!.score, 6));
}

export const errorOf = (message: string): ErrorRecord => ({ code: 'embeddings_failed', message });
