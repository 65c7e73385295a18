import type { Language } from '../language.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { WallClock } from '../wall-clock.ts';
import type { LocalTime } from './store/local-time.ts';
import type { RecallDbs } from './store/recall-dbs.ts';
import type { SearchPool } from './search/search-pool.ts';
import type { RawSessionRecord, ScanSource } from './search/search-scan.ts';

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
  /** LLM calls per turn. */
  maxToolIterations: number;
  /** Of the system prompt, titles and offline replies. */
  language: Language;
}

export function localNow(deps: RecallDeps): LocalTime {
  return deps.localTime(deps.clock.now());
}
