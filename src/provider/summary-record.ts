import { InvalidInputError } from '../errors.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import { MAX_CONVERSATION_ID_BYTES } from '../memory/contract/validate-input.ts';
import type { JsonObject, StoredMessage, SystemMessage } from '../message.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * Where the rolling summaries of a conversation live and what one records. They are stored in
 * the same `MessageLog` as the conversation, in a COMPANION conversation, one record per
 * summary, appended and never rewritten: durable on every backend, and the latest is the
 * companion's `tail(1)` (a read that does not grow with the conversation).
 *
 * The companion of `id` is `mnemo.summary/{id}`; when that would pass the store's 512 UTF-8
 * bytes it is `mnemo.summary#{sha256 hex of id}` (another prefix, so the two forms never meet).
 * The prefix `mnemo.summary` is RESERVED: the summary provider refuses conversation ids that
 * start with it (`InvalidInputError('invalid_id')`), so a companion is never taken for a
 * conversation; other users of the same store should not use it either.
 *
 * A record is `{role: 'assistant', content: text}` (assistant, so the companion adds nothing to
 * the store's system-message index) with meta `{summary: SummaryProvenance}`.
 */
export const SUMMARY_ID_PREFIX = 'mnemo.summary';

export function summaryConversationId(conversationId: string): string {
  const id = `${SUMMARY_ID_PREFIX}/${conversationId}`;
  if (id.length * 3 <= MAX_CONVERSATION_ID_BYTES || Buffer.byteLength(id, 'utf8') <= MAX_CONVERSATION_ID_BYTES) return id;
  return `${SUMMARY_ID_PREFIX}#${crypto().createHash('sha256').update(conversationId, 'utf8').digest('hex')}`;
}

/** Refuses the reserved ids (and non-strings; the store checks the rest). */
export function assertSummarizableId(conversationId: unknown): string {
  if (typeof conversationId !== 'string') {
    throw new InvalidInputError('invalid_id', 'conversation id must be a string', { reason: 'must be a string' });
  }
  if (conversationId.startsWith(SUMMARY_ID_PREFIX)) {
    throw new InvalidInputError('invalid_id', `conversation ids starting with "${SUMMARY_ID_PREFIX}" are reserved for summaries`, {
      reason: 'reserved prefix',
    });
  }
  return conversationId;
}

/** Where a summary comes from. */
export interface SummaryProvenance {
  /** First message id of the conversation this summary added (the previous one covered up to `from - 1`). */
  from: number;
  /** Last message id it covers. Built on its predecessors, it stands for messages 1..`to`. */
  to: number;
  /** The model that wrote it (`options.model`), or `'extractive'` for the offline summary. */
  model: string;
  /** When it was made, ISO 8601 with offset. */
  at: string;
  /** The companion record id of the summary it builds on, `null` for the first. */
  previous: number | null;
  /** `'llm'`: written by the model; `'extractive'`: picked from the messages offline. */
  method: 'llm' | 'extractive';
}

/** A summary to store: its text and provenance (`previous` is the one it builds on). */
export interface NewSummary extends SummaryProvenance {
  /** The summary. */
  text: string;
}

/** A stored summary: its record id in the companion conversation, its text and provenance. */
export interface SummaryRecord extends SummaryProvenance {
  /** Its record id in the companion conversation. */
  id: number;
  /** The summary. */
  text: string;
}

export function toSummaryRecord(stored: StoredMessage): SummaryRecord | undefined {
  const p = stored.meta['summary'];
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined;
  const { from, to, model, at, previous, method } = p as JsonObject;
  if (typeof from !== 'number' || typeof to !== 'number' || typeof model !== 'string' || typeof at !== 'string') return undefined;
  const text = typeof stored.message.content === 'string' ? stored.message.content : '';
  return {
    id: stored.message_id,
    text,
    from,
    to,
    model,
    at,
    previous: typeof previous === 'number' ? previous : null,
    method: method === 'extractive' ? 'extractive' : 'llm',
  };
}

/** The companion record of a summary. */
export function summaryEntry(summary: NewSummary): { message: { role: 'assistant'; content: string }; meta: JsonObject } {
  return { message: { role: 'assistant', content: summary.text }, meta: provenanceMeta(summary) };
}

export function provenanceMeta(p: SummaryProvenance): JsonObject {
  return { summary: { from: p.from, to: p.to, model: p.model, at: p.at, previous: p.previous, method: p.method } };
}

/** The newest summary of a conversation, or `undefined`: one `tail(1)` of its companion. */
export async function latestSummary(log: MessageLog, conversationId: string): Promise<SummaryRecord | undefined> {
  const [last] = await log.tail(summaryConversationId(conversationId), 1);
  return last === undefined ? undefined : toSummaryRecord(last);
}

/** Every summary of a conversation, oldest first. */
export async function listSummaries(log: MessageLog, conversationId: string): Promise<SummaryRecord[]> {
  const stored = await log.range(summaryConversationId(conversationId));
  return stored.map(toSummaryRecord).filter((r): r is SummaryRecord => r !== undefined);
}

/** How a summary is sent to the model: one system message, right after the conversation's own. */
export function summaryMessage(summary: SummaryRecord): SystemMessage {
  return {
    role: 'system',
    content: `Summary of the earlier part of this conversation (messages 1-${summary.to}; the messages after it follow):\n${summary.text}`,
  };
}
