import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { Message } from '../message.ts';
import { readLastTurn, isMessageLog } from './history-reader.ts';
import type { MemoryProvider } from './memory-provider.ts';
import { pairToolCalls } from './pair-tool-calls.ts';
import { InvalidMemoryConfigError } from './provider-errors.ts';
import { createSummarizer, type Summarizer, type SummarizerOptions } from './summarizer.ts';
import { assertSummarizableId, summaryMessage, type SummaryRecord } from './summary-record.ts';

/**
 * A rolling summary provider (compaction): what is sent is
 * `[the conversation's system messages, the latest summary as one system message, every
 * non-system message after the part it covers]`, so a turn costs the summary plus the
 * unsummarized tail however long the conversation has run. After a turn (when `append` stores
 * an assistant reply without tool calls: the agent's final answer), the summarizer checks in
 * the background whether the pending part (everything after the summary and before the last
 * `keepLast` whole turns) costs more than `maxTokens`, and if so summarizes it, building on the
 * previous summary (summarizer.ts). Never inside a turn: the summary a turn starts with (read
 * at its first `prepare` after its user message) is the one all of its model calls get.
 * Summaries are kept in the same store with provenance (summary-record.ts); the history itself
 * is never changed, so `history(id)` is still the whole conversation.
 *
 * The store must be a `MessageLog` (every built-in store and the runtime's memory is).
 * `prepare(id, messages)` expects `messages` to begin with the stored history, as the agent
 * passes it (message id k at index k - 1); `prepareHistory` reads the same from the store:
 * the system-message index, the summary's `tail(1)` and a `range` after it. `clear(id)` also
 * deletes the summaries. Ids starting with `mnemo.summary` are refused (reserved).
 */
export type SummaryProviderOptions = SummarizerOptions;

export interface SummaryProvider extends MemoryProvider {
  /**
   * What `prepare` would send after the stored history, read from the store in three bounded reads.
   */
  prepareHistory(conversationId: string): Promise<Message[]>;
  /** The history from its last user message on. */
  lastTurn(conversationId: string): Promise<Message[]>;
  /** Summarizes the pending part now (see `Summarizer.summarize`); the next turn uses it. */
  summarize(conversationId: string): Promise<SummaryRecord | undefined>;
  /** Every summary of the conversation, oldest first, with provenance. */
  summaries(conversationId: string): Promise<SummaryRecord[]>;
  /** Resolves once no summarization over this store is running or queued. */
  idle(): Promise<void>;
  /** The summarizer underneath (for `forget`, `latest`, `settled`). */
  readonly summarizer: Summarizer;
}

/**
 * A provider that sends the latest rolling summary and what follows it (see
 * `SummaryProviderOptions`), summarizing in the background after each final answer.
 *
 * @throws `InvalidMemoryConfigError` (`invalid_memory_config`) when `store` is not a `MessageLog`,
 * or for a bad option.
 */
export function summaryProvider(store: ChatMemory, options: SummaryProviderOptions = {}): SummaryProvider {
  if (typeof store !== 'object' || store === null || !isMessageLog(store) || typeof store.append !== 'function') {
    throw new InvalidMemoryConfigError('summaryProvider needs a MessageLog (get, add, clear, append, range, tail, systemMessages)', store);
  }
  const log = store;
  const summarizer = createSummarizer(log, options);
  /** The summary of the turn in progress, per conversation: read once per turn. */
  const pinned = new Map<string, SummaryRecord | undefined>();
  const summaryOfTurn = async (id: string): Promise<SummaryRecord | undefined> => {
    if (pinned.has(id)) return pinned.get(id);
    const latest = await summarizer.latest(id);
    pinned.set(id, latest);
    return latest;
  };
  const head = async (id: string, summary: SummaryRecord | undefined): Promise<Message[]> => [
    ...(await log.systemMessages(id)).map((r) => r.message),
    ...(summary ? [summaryMessage(summary)] : []),
  ];

  return {
    summarizer,
    history: async (id) => log.get(assertSummarizableId(id)),
    async append(id, messages) {
      await log.add(assertSummarizableId(id), messages);
      if (messages.some((m) => m.role === 'user')) pinned.delete(id);
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant' && !last.tool_calls?.length) {
        pinned.delete(id);
        summarizer.afterTurn(id);
      }
    },
    async prepare(id, messages) {
      const summary = await summaryOfTurn(assertSummarizableId(id));
      const covered = summary !== undefined && messages.length >= summary.to ? summary.to : 0;
      return [
        ...messages.filter((m) => m.role === 'system'),
        ...(summary ? [summaryMessage(summary)] : []),
        ...pairToolCalls(messages.slice(covered).filter((m) => m.role !== 'system')),
      ];
    },
    async prepareHistory(id) {
      const summary = await summaryOfTurn(assertSummarizableId(id));
      const rows = await log.range(id, { from: (summary?.to ?? 0) + 1 });
      return [...(await head(id, summary)), ...pairToolCalls(rows.map((r) => r.message).filter((m) => m.role !== 'system'))];
    },
    lastTurn: async (id) => readLastTurn(log, assertSummarizableId(id)),
    async clear(id) {
      pinned.delete(assertSummarizableId(id));
      await summarizer.forget(id);
      await log.clear(id);
    },
    async summarize(id) {
      const made = await summarizer.summarize(id);
      pinned.delete(id);
      return made;
    },
    summaries: (id) => summarizer.summaries(id),
    idle: () => summarizer.idle(),
  };
}
