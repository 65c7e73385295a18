/**
 * What one live conversation costs in memory: in this (fresh, `--expose-gc`) process, a Mnemo
 * runtime on LMDB is opened and warmed, garbage-collected and measured; then N conversations
 * get one appended message each, so N conversation actors are live (idleMs an hour, the cap
 * above N), and the process is collected and measured again. The growth over N is the cost.
 *
 * Before the baseline, a runtime of its own activates 5,000 conversations and stops, so the code
 * is compiled and the young generation has grown as in any busy process (fixed costs, not
 * the conversations'). RSS counts the pages of LMDB's memory-mapped data file the process touched (the N stored
 * messages); that part is reported apart (`mappedRss`, from /proc/self/smaps), so the cost of
 * a live conversation is the RSS growth without it. Optionally a heap census: self size per
 * constructor name, per conversation (a heap snapshot, parsed here; slow above ~20k).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSnapshot, getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

export interface LiveAnswer {
  kind: 'live';
  conversations: number;
  /** Conversation actors alive when measured (N plus the warm-up one). */
  liveActors: number;
  baselineRss: number;
  rss: number;
  /** Resident pages of LMDB's mapped files, before and after. */
  baselineMappedRss: number;
  mappedRss: number;
  baselineHeap: number;
  heapUsed: number;
  /** Wall time of the N first appends. */
  appendSeconds: number;
  /** Where the RSS growth went: per V8 heap space, bytes reserved (size) and used, before and after; malloc'ed by V8. */
  spaces: Record<string, { size: number; used: number; baselineSize: number; baselineUsed: number }>;
  malloced: number;
  baselineMalloced: number;
  /** Self bytes per conversation by constructor name (largest first), if asked. */
  census?: Array<{ name: string; count: number; bytesPerConversation: number }>;
}

/** Full collections, with pauses so V8's background unmapper returns freed pages to the OS. */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** N conversations with one appended message each, 100 at a time. */
async function touch(memory: { add(c: string, m: Array<{ role: 'user'; content: string }>): Promise<unknown> }, prefix: string, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(100, n) }, async () => {
      for (let c = next++; c < n; c = next++) await memory.add(`${prefix}${c}`, [{ role: 'user', content: `message of conversation ${c}` }]);
    }),
  );
}

/** Resident bytes of the mappings of files named *.mdb (LMDB's data and lock files). */
export function mappedLmdbRss(): number {
  let total = 0;
  let inMdb = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMdb = line.trimEnd().endsWith('.mdb');
    else if (inMdb && line.startsWith('Rss:')) total += Number(line.split(/\s+/)[1]) * 1024;
  }
  return total;
}

export async function measureLiveConversations(n: number, dir: string, census = false): Promise<LiveAnswer> {
  const { startRuntime } = await import('../../../src/runtime.ts');
  // Warm the process first, on a runtime of its own (stopped after): the code paths of
  // activation, hydration and commit are compiled, and V8's young generation has grown to
  // what a busy process has. Neither is a cost of the conversations measured after.
  const warm = await startRuntime({ name: 'live_warm', dataDir: join(dir, 'warm'), idleMs: 3_600_000, recall: false });
  await touch(warm.memory, 'w', 5000);
  await warm.stop();
  const runtime = await startRuntime({ name: 'live_bench', dataDir: join(dir, 'live'), idleMs: 3_600_000, maxLiveConversations: n + 10, recall: false });
  await touch(runtime.memory, 'warm', 1);
  await collect();
  const baseCensus = census ? heapCensus() : undefined;
  await collect();
  const base = process.memoryUsage();
  const baseMapped = mappedLmdbRss();
  const baseSpaces = getHeapSpaceStatistics();
  const baseMalloced = getHeapStatistics().malloced_memory;
  const started = performance.now();
  await touch(runtime.memory, 'c', n);
  const appendSeconds = (performance.now() - started) / 1000;
  await collect();
  const after = process.memoryUsage();
  const answer: LiveAnswer = {
    kind: 'live',
    conversations: n,
    liveActors: runtime.liveConversations,
    baselineRss: base.rss,
    rss: after.rss,
    baselineMappedRss: baseMapped,
    mappedRss: mappedLmdbRss(),
    baselineHeap: base.heapUsed,
    heapUsed: after.heapUsed,
    appendSeconds,
    spaces: Object.fromEntries(
      getHeapSpaceStatistics().map((sp) => {
        const before = baseSpaces.find((b) => b.space_name === sp.space_name);
        return [sp.space_name, { size: sp.space_size, used: sp.space_used_size, baselineSize: before?.space_size ?? 0, baselineUsed: before?.space_used_size ?? 0 }];
      }),
    ),
    malloced: getHeapStatistics().malloced_memory,
    baselineMalloced: baseMalloced,
  };
  if (baseCensus !== undefined) answer.census = censusGrowth(baseCensus, heapCensus(), n);
  await runtime.stop();
  return answer;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

type Census = Map<string, { count: number; bytes: number }>;

/** Count and self size per (type, constructor name) over the whole heap. */
function heapCensus(): Census {
  const stream = getHeapSnapshot();
  const chunks: string[] = [];
  for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) chunks.push(chunk.toString());
  const snap = JSON.parse(chunks.join('')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byName: Census = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const named = type === 'object' || type === 'closure' || type === 'hidden' || type === 'array' || type === 'code';
    const name = named ? `${type}:${snap.strings[snap.nodes[i + nameAt]!]}` : type;
    const entry = byName.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snap.nodes[i + sizeAt]!;
    byName.set(name, entry);
  }
  return byName;
}

/** What grew between two censuses, per conversation, largest first (the top 40). */
function censusGrowth(before: Census, after: Census, n: number): NonNullable<LiveAnswer['census']> {
  return [...after]
    .map(([name, e]) => ({ name, count: e.count - (before.get(name)?.count ?? 0), bytesPerConversation: (e.bytes - (before.get(name)?.bytes ?? 0)) / n }))
    .sort((a, b) => b.bytesPerConversation - a.bytesPerConversation)
    .slice(0, 40);
}
