import type { LanguageSetting } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import type { WallClock } from '../../wall-clock.ts';
import type { LocalTime } from '../rows/local-time.ts';
import type { RecallStore } from '../storage/recall-store.ts';
import type { FactsCache } from './facts-view.ts';
import type { FactSemantic } from './rank-facts.ts';

/** Told of a facts model failure: the error as thrown (a provider's own words included), and where. */
export type FactsErrorHandler = (error: unknown, task: 'judge' | 'extraction') => void;

/** What the facts operations need of the service (the recall service's deps are a superset). */
export interface FactsDeps {
  store: RecallStore;
  /** The users' facts views, kept while the store's generation holds (facts-view.ts). */
  facts: FactsCache;
  /** With embeddings: the vector half of ranking facts. */
  semantic: FactSemantic | undefined;
  /** The model that judges and extracts facts; `undefined`: keys and duplicate rules only. */
  factsLlm: LlmService | undefined;
  /** Told of every judge and extraction failure, whole (recall's `onFactsError`). */
  onFactsError: FactsErrorHandler;
  /** Of the facts prompts (`'auto'`: each in the language of the text it is about). */
  language: LanguageSetting;
  clock: WallClock;
  /** The local wall time of an instant (a document version's `ts`). */
  localTime(epochMs: number): LocalTime;
}
