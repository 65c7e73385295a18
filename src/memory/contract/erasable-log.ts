import type { MessageLog } from './message-log.ts';

/**
 * A `MessageLog` that erases many conversations at once, for erasure of a user's data (recall's
 * `eraseUser` on a store outside its LMDB environment). PostgreSQL's does it in ONE transaction.
 */
export interface ConversationSelection {
  /** These conversations. */
  ids: readonly string[];
  /** And every conversation whose id starts with one of these (non-empty strings). */
  prefixes: readonly string[];
}

export interface ErasableLog extends MessageLog {
  /** Deletes the selected conversations (messages, indexes, counters: ids restart at 1); resolves with how many existed. */
  eraseConversations(selection: ConversationSelection): Promise<number>;
}

export function isErasable(log: MessageLog): log is ErasableLog {
  return typeof (log as Partial<ErasableLog>).eraseConversations === 'function';
}
