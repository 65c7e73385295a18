import type { Language } from '../language.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { Summarizer } from '../provider/summarizer.ts';
import type { WallClock } from '../wall-clock.ts';
import type { LocalTime } from './rows/local-time.ts';
import type { RecallStore } from './storage/recall-store.ts';
import type { FactsCache } from './facts/facts-view.ts';
import type { FactSemantic } from './facts/rank-facts.ts';
import type { RecallEmbeddings } from './embeddings/recall-embeddings.ts';
import type { RecallLimits } from './recall-limits.ts';

/** Told of a facts model failure: the error as thrown (a provider's own words included), and where. */
export type FactsErrorHandler = (error: unknown, task: 'judge' | 'extraction') => void;

/** What the parts of the layered memory share: its store, its time, its models. */
export interface RecallDeps {
  /** Where everything lives (storage/recall-store.ts). */
  store: RecallStore;
  /** `store.transcripts`: the session transcripts, one conversation per session. */
  memory: MessageLog;
  /** `undefined`: offline, the demo's fallback replies and titles. */
  llm: LlmService | undefined;
  clock: WallClock;
  /** The local wall time of an instant in the configured zone. */
  localTime(epochMs: number): LocalTime;
  /** LLM calls per turn. */
  maxToolIterations: number;
  /** The users' facts views, kept while the store's generation holds (facts/facts-view.ts). */
  facts: FactsCache;
  /** With embeddings: the vector half of ranking facts. */
  semantic: FactSemantic | undefined;
  /** The model that judges and extracts facts; `undefined`: keys and duplicate rules only, no extraction. */
  factsLlm: LlmService | undefined;
  /** Told of every judge and extraction failure, whole (recall's `onFactsError`). */
  onFactsError: FactsErrorHandler;
  /** Token budget of a turn's `[LONG_TERM]` section. */
  longTermTokens: number;
  /** Rolling summaries of the sessions (recall's `summary` option); undefined: off. */
  summarizer: Summarizer | undefined;
  /** Of the system prompt, titles, offline replies, Mnemo's tools and the facts prompts (language.ts). */
  language: Language;
  /** Embeddings (recall's `embeddings` option); undefined: BM25 alone. */
  embeddings: RecallEmbeddings | undefined;
  /** What one user can make it hold (recall-limits.ts). */
  limits: Readonly<Required<RecallLimits>>;
}

export function localNow(deps: Pick<RecallDeps, 'clock' | 'localTime'>): LocalTime {
  return deps.localTime(deps.clock.now());
}
