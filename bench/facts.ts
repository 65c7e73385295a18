/**
 * Long-term memory as facts, measured (the two targets):
 *
 * 1. Preference changes: USERS users x CHANGES changes each, run against the real recall
 *    service (LMDB in a temp dir, offline: keys and duplicate rules only). Each change is one of:
 *    a keyed change (a new value for one of 4 keys, sometimes the value it already has), a
 *    keyless near-duplicate restatement of a keyless fact ("The user has a dog named Rex!"),
 *    3 concurrent keyed changes of one key, or 4 concurrent compare-and-set updates of one entry
 *    from the same version. After every change the current view is checked:
 *    - stale: a key whose current entry is not the last acknowledged write's text;
 *    - deleted both: a key or keyless fact with no current entry;
 *    - duplicates: two current entries that are near-duplicates, or two current entries of a key;
 *    - lost updates: an acknowledged write whose entry is neither current nor superseded by a
 *      later acknowledged write, or a CAS group with not exactly one winner.
 *    All four must be 0.
 * 2. Injected tokens: one user with 10, 100, 1 000 and 10 000 entries; a turn's `[LONG_TERM]`
 *    section, in o200k tokens (budget 300), beside what injecting the whole document costs.
 *
 * Run: `npx tsx bench/facts.ts [--quick]` (quick: 10 users, up to 1 000 entries). Prints a
 * table and writes bench/results/facts.json.
 */
import { lmdbRecall } from './support/lmdb-recall.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../src/memory/lmdb/lmdb-store.ts';
import { createRecall, FactConflictError, type FactEntry, type FactWrite, type Recall } from '../src/recall/index.ts';
import { isNearDuplicate, shapeOf } from '../src/recall/facts/fact-text.ts';
import { factSeq } from '../src/recall/records/fact-entry.ts';
import { textTokens } from '../src/recall/facts/rank-facts.ts';
import { makeTempDir, removeDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
const USERS = quick ? 10 : 50;
const CHANGES = 20;
const SIZES = quick ? [10, 100, 1_000] : [10, 100, 1_000, 10_000];
const KEYS = ['drink', 'color', 'city', 'food'] as const;
const VALUES: Record<(typeof KEYS)[number], string[]> = {
  drink: ['tea', 'coffee', 'water', 'juice', 'milk'],
  color: ['red', 'blue', 'green', 'teal', 'black'],
  city: ['Paris', 'Berlin', 'Oslo', 'Rome', 'Lima'],
  food: ['pasta', 'sushi', 'tacos', 'curry', 'salad'],
};
const sentence = (key: string, value: string) => `favorite ${key} is ${value}`;

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Counts {
  changes: number;
  writes: number;
  duplicatesAnswered: number;
  conflicts: number;
  stale: number;
  deletedBoth: number;
  duplicates: number;
  lostUpdates: number;
}

function open(dir: string): { recall: Recall; close(): Promise<void> } {
  const env = acquireEnvironment(dir, { noSync: true });
  const memory = createLmdbStore({ path: dir });
  const recall = lmdbRecall({ memory, env, timeZone: 'UTC' });
  return {
    recall,
    async close() {
      await recall.close();
      await memory.close();
      await new Promise((r) => setTimeout(r, 0));
      await env.release();
    },
  };
}

async function preferenceChanges(recall: Recall): Promise<Counts> {
  const counts: Counts = { changes: 0, writes: 0, duplicatesAnswered: 0, conflicts: 0, stale: 0, deletedBoth: 0, duplicates: 0, lostUpdates: 0 };
  await Promise.all(
    Array.from({ length: USERS }, async (_, u) => {
      const user = `bench-user-${u}`;
      const random = rng(u + 1);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
      const expected = new Map<string, string>();
      const keyless = `the user has a dog named Rex${u}`;
      const acked = new Set<string>();
      const ack = (w: FactWrite) => {
        counts.writes++;
        if (w.status === 'duplicate') counts.duplicatesAnswered++;
        acked.add(w.entry.id);
      };
      for (const key of KEYS) {
        const w = await recall.remember(user, { text: sentence(key, VALUES[key][0]!), key });
        ack(w);
        expected.set(key, w.entry.text);
      }
      ack(await recall.remember(user, { text: keyless }));
      for (let i = 0; i < CHANGES; i++) {
        counts.changes++;
        const key = pick(KEYS);
        const kind = i % 5;
        if (kind === 4) {
          // Concurrent compare-and-set from one version: exactly one may win.
          const entry = (await recall.listMemory(user)).find((e) => e.key === key)!;
          const tries = VALUES[key].filter((v) => sentence(key, v) !== entry.text).slice(0, 4);
          const results = await Promise.allSettled(tries.map((v) => recall.updateMemory(user, entry.id, { text: sentence(key, v), version: entry.version })));
          const won = results.filter((r): r is PromiseFulfilledResult<FactWrite> => r.status === 'fulfilled');
          counts.conflicts += results.filter((r) => r.status === 'rejected' && r.reason instanceof FactConflictError).length;
          if (won.length !== 1 || results.some((r) => r.status === 'rejected' && !(r.reason instanceof FactConflictError))) counts.lostUpdates++;
          for (const w of won) {
            ack(w.value);
            expected.set(key, w.value.entry.text);
          }
        } else if (kind === 2) {
          // Concurrent keyed changes: all succeed, in commit order; the last one is current.
          const writes = await Promise.all(VALUES[key].slice(1, 4).map((v) => recall.remember(user, { text: sentence(key, v), key })));
          writes.forEach(ack);
          const last = writes.reduce((a, b) => (factSeq(b.entry.id)! > factSeq(a.entry.id)! ? b : a));
          expected.set(key, last.entry.text);
        } else if (kind === 3) {
          // A keyless restatement of a fact already known.
          const restated = pick([`The user has a dog named Rex${u}!`, `the user  HAS a dog named rex${u}.`, keyless]);
          const w = await recall.remember(user, { text: restated });
          ack(w);
        } else {
          // A keyed change (sometimes to the value it already has).
          const text = sentence(key, pick(VALUES[key]));
          const w = await recall.remember(user, { text, key });
          ack(w);
          if (w.status !== 'duplicate') expected.set(key, w.entry.text);
        }
        check(await recall.listMemory(user), await recall.memoryHistory(user), expected, keyless, acked, counts);
      }
    }),
  );
  return counts;
}

function check(current: FactEntry[], history: FactEntry[], expected: Map<string, string>, keyless: string, acked: Set<string>, counts: Counts): void {
  for (const [key, text] of expected) {
    const mine = current.filter((e) => e.key === key);
    if (mine.length === 0) counts.deletedBoth++;
    else if (mine.length > 1) counts.duplicates += mine.length - 1;
    else if (mine[0]!.text !== text) counts.stale++;
  }
  if (!current.some((e) => isNearDuplicate(shapeOf(e.text), shapeOf(keyless)))) counts.deletedBoth++;
  const shapes = current.map((e) => shapeOf(e.text));
  for (let i = 0; i < shapes.length; i++) for (let j = i + 1; j < shapes.length; j++) if (isNearDuplicate(shapes[i]!, shapes[j]!)) counts.duplicates++;
  const byId = new Map(history.map((e) => [e.id, e]));
  for (const id of acked) {
    const e = byId.get(id);
    if (e === undefined) {
      counts.lostUpdates++;
      continue;
    }
    if (e.validTo !== undefined && (e.supersededBy === undefined || !acked.has(e.supersededBy))) counts.lostUpdates++;
  }
  // Count each lost write once: forget the acknowledged ids already checked clean and ended.
  for (const id of [...acked]) if (byId.get(id)?.validTo !== undefined) acked.delete(id);
}

async function injectedTokens(recall: Recall): Promise<{ entries: number; injected: number; wholeDocument: number }[]> {
  const count = await textTokens();
  const out: { entries: number; injected: number; wholeDocument: number }[] = [];
  let have = 0;
  const user = 'bench-tokens';
  for (const size of SIZES) {
    for (let start = have; start < size; start += 200) {
      const n = Math.min(200, size - start);
      await Promise.all(
        Array.from({ length: n }, (_, k) => recall.remember(user, { text: `fact ${start + k}: the user likes item${start + k} in category cat${(start + k) % 97}` })),
      );
    }
    have = size;
    const turns = 3;
    let injected = 0;
    for (let t = 0; t < turns; t++) {
      await recall.chat({ userId: user, sessionId: `s${size}-${t}`, message: `what about item${(size * 7 + t) % size} in cat${t}?` });
      const log = (await recall.dialogueLog(user, `s${size}-${t}`)).at(-1)!;
      injected = Math.max(injected, count(log.memoryContext.split('[LONG_TERM]\n')[1] ?? ''));
    }
    out.push({ entries: size, injected, wholeDocument: count(await recall.getLongTerm(user)) });
  }
  return out;
}

async function main(): Promise<void> {
  const dir = makeTempDir('facts');
  const service = open(dir);
  try {
    const started = performance.now();
    const counts = await preferenceChanges(service.recall);
    const changesMs = performance.now() - started;
    const tokens = await injectedTokens(service.recall);
    console.log(`preference changes: ${USERS} users x ${CHANGES} changes (${changesMs.toFixed(0)} ms)`);
    console.table([counts]);
    console.log('injected [LONG_TERM] tokens per turn (budget 300) vs the whole document');
    console.table(tokens);
    const ok = counts.stale === 0 && counts.deletedBoth === 0 && counts.duplicates === 0 && counts.lostUpdates === 0;
    const flat = tokens.every((t) => t.injected <= 300);
    const results = join(dirname(fileURLToPath(import.meta.url)), 'results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'facts.json'), JSON.stringify({ quick, users: USERS, changes: CHANGES, counts, changesMs, tokens, ok, flat }, null, 2) + '\n');
    if (!ok || !flat) process.exitCode = 1;
  } finally {
    await service.close();
    removeDir(dir);
  }
}

await main();
