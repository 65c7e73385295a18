import type { Language } from '../language.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { WriteAhead } from '../memory/lmdb/write-ahead.ts';
import type { Summarizer } from '../provider/summarizer.ts';
import type { WallClock } from '../wall-clock.ts';
import type { LocalTime } from './store/local-time.ts';
import type { RecallDbs } from './store/recall-dbs.ts';
import type { SearchPool } from './search/search-pool.ts';
import type { RawSessionRecord, ScanSource } from './search/search-scan.ts';
import type { FactStore } from './facts/fact-store.ts';
import type { RecallEmbeddings } from './embeddings/recall-embeddings.ts';
import type { RecallLimits } from './recall-limits.ts';

/** Told of a facts model failure: the error as thrown (a provider's own words included), and where. */
export type FactsErrorHandler = (error: unknown, task: 'judge' | 'extraction') => void;

/** What the parts of the layered memory share: its stores, its time, its helpers. */
export interface RecallDeps {
  /** Session transcripts, one conversation per session. */
  memory: MessageLog;
  dbs: RecallDbs & { guard(): void };
  /** `undefined`: offline, the demo's fallback replies and titles. */
  llm: LlmService | undefined;
  clock: WallClock;
  /** The local wall time of an instant in the configured zone. */
  localTime(epochMs: number): LocalTime;
  pool: SearchPool | undefined;
  /** Scans over more rows than this go to the pool (when there is one). */
  poolThreshold: number;
  /** `memory`'s own `messages` db, when it lives in this environment: session scans read it
   * directly (and so can the pool's workers). Undefined: scans go through `memory`. */
  sessionScan: ScanSource<[string, number], RawSessionRecord> | undefined;
  /** The environment's write-ahead journal of message appends (memory's lmdb/write-ahead.ts),
   * when `memory` lives here and has one: a direct read of its rows settles it first. */
  journal: Pick<WriteAhead, 'settle' | 'scrub'> | undefined;
  /** `memory` is the LMDB store of this environment: recall's writes issued in the event turn
   * of a session row's write commit with it (session-commit.ts). */
  sharedCommits: boolean;
  /** LLM calls per turn. */
  maxToolIterations: number;
  /** Long-term facts (src/recall/facts/). */
  facts: FactStore;
  /** The model that judges and extracts facts; `undefined`: keys and duplicate rules only, no extraction. */
  factsLlm: LlmService | undefined;
  /** Told of every judge and extraction failure, whole (recall's `onFactsError`). */
  onFactsError: FactsErrorHandler;
  /** Token budget of a turn's `[LONG_TERM]` section. */
  longTermTokens: number;
  /** Starts the background extraction drain (set when `factsLlm` is). */
  kickExtraction: (() => void) | undefined;
  /** Rolling summaries of the sessions (recall's `summary` option); undefined: off. */
  summarizer: Summarizer | undefined;
  /** Of the system prompt, titles, offline replies, Mnemo's tools and the facts prompts (language.ts). */
  language: Language;
  /** Embeddings (recall's `embeddings` option); undefined: BM25 alone. */
  embeddings: RecallEmbeddings | undefined;
  /** What one user can make it hold (recall-limits.ts). */
  limits: Readonly<Required<RecallLimits>>;
}

export function localNow(deps: RecallDeps): LocalTime {
  return deps.localTime(deps.clock.now());
}
