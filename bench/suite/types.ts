/**
 * The contract every storage adapter of the suite implements, so each workload runs the same
 * records through each store the same way.
 *
 * - `append` resolves only when the record is durable for that adapter (see `info.durability`:
 *   which fsync it waits for); adapters with `durable: false` keep data in memory only.
 * - `load` fills a conversation fast, for setting up a read workload; it is never timed and may
 *   use a store's bulk path (one transaction, no per-record fsync), but leaves the same layout
 *   a sequence of `append`s would (for LangGraph: only the latest checkpoint, see langgraph.ts).
 * - `tail(c, n)` returns the last `n` records of `c`, oldest first, the way the store's users
 *   read them.
 * - `search` (optional) returns the most recent `limit` records of `c` whose content contains
 *   `keyword` (case-insensitive substring), oldest first: the demo's keyword recall.
 */
import type { DiskUsage } from './temp-dir.ts';

export type Role = 'user' | 'assistant';

export interface BenchMessage {
  role: Role;
  content: string;
}

export const ADAPTER_IDS = [
  'raw-lmdb',
  'mnemo-lmdb',
  'mnemo-store',
  'mnemo-memory',
  'jsonl',
  'sqlite',
  'langgraph-memory',
  'langgraph-sqlite',
  'mnemo-postgres',
  'sqlite-fts5',
  'minisearch',
] as const;

export type AdapterId = (typeof ADAPTER_IDS)[number];

export interface AdapterInfo {
  id: AdapterId;
  /** Short name for tables and charts. */
  label: string;
  /** True when `append` waits for stable storage. */
  durable: boolean;
  /** What `append` waits for, in plain words (which fsync). */
  durability: string;
  /** Anything a reader must know to read its figures. */
  notes?: string;
  /** Shown only where it explains a cost (the append workload), not as a peer. */
  diagnostic?: boolean;
  /** The only workloads it takes part in, when not all. */
  workloads?: readonly WorkloadId[];
  /** What its `compact` runs, in plain words, for a store that has one. */
  compaction?: string;
}

export interface LogAdapter {
  readonly info: AdapterInfo;
  append(conversationId: string, message: BenchMessage): Promise<void>;
  load(conversationId: string, messages: readonly BenchMessage[]): Promise<void>;
  tail(conversationId: string, n: number): Promise<BenchMessage[]>;
  search?(conversationId: string, keyword: string, limit: number): Promise<BenchMessage[]>;
  /** The store's bytes when they are not files in its directory (a server's), measured before `close`. */
  footprint?(): Promise<DiskUsage>;
  /** The store's own maintenance that gives space back (SQLite's VACUUM, Mnemo's `compact`), as its `info.compaction` says. */
  compact?(): Promise<void>;
  close(): Promise<void>;
}

export interface AdapterFactory {
  readonly info: AdapterInfo;
  /** Why it cannot run here (say, no server configured), or undefined: the suite skips it with this note. */
  unavailable?(): string | undefined;
  /** Opens the store in `dir` (an existing store is reopened: the restart workload relies on it). */
  open(dir: string): Promise<LogAdapter>;
}

/**
 * Peers that are not log stores (no adapter factory): the search engines the ranked-search
 * workload compares Mnemo's index with. Listed in a run's adapters when that workload ran.
 */
export const PEER_INFOS: readonly AdapterInfo[] = [
  { id: 'sqlite-fts5', label: 'SQLite FTS5 bm25', durable: true, durability: 'n/a (a search index, built in one transaction, synchronous=OFF)', notes: "better-sqlite3, tokenize 'porter unicode61'" },
  { id: 'minisearch', label: 'MiniSearch', durable: false, durability: 'n/a (in memory)', notes: 'default tokenizer, BM25+' },
];

/** The workloads of the suite (`--only` names them). */
export const WORKLOAD_IDS = ['append', 'tail', 'chat', 'restart', 'startup', 'rss', 'live', 'search', 'disk', 'commit', 'turn-fsyncs', 'ranked', 'index-build', 'upkeep', 'turn-cost'] as const;
export type WorkloadId = (typeof WORKLOAD_IDS)[number];
