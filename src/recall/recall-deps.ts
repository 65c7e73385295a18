import type { LanguageSetting } from '../language.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { WallClock } from '../wall-clock.ts';
import type { Summarizer } from '../provider/summarizer.ts';
import type { LocalTime } from './rows/local-time.ts';
import type { RecallStore } from './storage/recall-store.ts';
import type { FactsDeps, FactsErrorHandler } from './facts/facts-deps.ts';
import type { EmbeddingDrain } from './embeddings/embedding-drain.ts';
import type { EmbeddingsClient } from './embeddings/embeddings-client.ts';
import type { ResolvedEmbeddingsOptions } from './embeddings/embeddings-options.ts';
import type { RecallLimits } from './recall-limits.ts';

export type { FactsErrorHandler };

/** What the parts of the layered memory share: its store, its time, its models. */
export interface RecallDeps extends FactsDeps {
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
  /** Token budget of a turn's `[LONG_TERM]` section. */
  longTermTokens: number;
  /** Rolling summaries of the sessions (recall's `summary` option); undefined: off. */
  summary: SummaryEngine | undefined;
  /** Of the system prompt, titles, offline replies, Mnemo's tools and the facts prompts (language.ts: `'auto'` resolves per text with `languageOf`). */
  language: LanguageSetting;
  /** Embeddings (recall's `embeddings` option); undefined: BM25 alone. */
  embeddings: RecallEmbeddings | undefined;
  /** What one user can make it hold (recall-limits.ts). */
  limits: Readonly<Required<RecallLimits>>;
}

/** What the recall service holds of its embeddings (absent when not configured). */
export interface RecallEmbeddings {
  options: ResolvedEmbeddingsOptions;
  /** Embeds queries (the same endpoint and model as the drain). */
  client: EmbeddingsClient;
  /** The drain running now, if any (the runtime's supervised one, or the service's own). */
  drain: () => EmbeddingDrain | undefined;
}

export function localNow(deps: Pick<RecallDeps, 'clock' | 'localTime'>): LocalTime {
  return deps.localTime(deps.clock.now());
}

/** Rolling summaries of sessions (recall-api.ts `summary`), as the turn and the summary worker use them. */
export interface SummaryEngine {
  keepLast: number;
  maxTokens: number;
  /** Writes the summaries; `undefined`: extractive. */
  llm: LlmService | undefined;
  clock: WallClock | undefined;
  /** The read side a turn uses (`latest`, `due`); its own writes go through jobs. */
  reader: Summarizer;
}
