import type { Database, RootDatabase } from 'lmdb';
import { InvalidInputError } from '../../errors.ts';
import { validateConversationId } from '../contract/validate-input.ts';
import { commitFailure } from './lmdb-environment.ts';
import { CONVERSATION_TTL_DB } from './lmdb-table.ts';

/**
 * Per-conversation retention overrides, in the LMDB environment beside the messages: db
 * `conversation-ttl`, key `[conversationId]` (so a user's erasure removes it with the
 * conversation: it is one of `CONVERSATION_DBS`), value the idle TTL in ms, or `null` for
 * "never expires". No record: the runtime's `retention.idleTtlMs`.
 */
export type TtlOverride = number | null;

export interface ConversationTtls {
  /** `ms` > 0 (an integer), `null` (never expires), or `undefined` (back to the runtime's default). */
  set(conversationId: string, ms: TtlOverride | undefined): Promise<void>;
  /** The override; `undefined` when there is none. */
  get(conversationId: string): TtlOverride | undefined;
}

export function conversationTtls(root: () => RootDatabase, path: () => string): ConversationTtls {
  // Opened per call (cheap): the environment may have been reopened since the last one.
  const handle = (): Database<TtlOverride, [string]> => root().openDB<TtlOverride, [string]>(CONVERSATION_TTL_DB, { encoding: 'json' });
  return {
    async set(conversationId, ms) {
      const c = validateConversationId(conversationId);
      if (ms !== undefined && ms !== null && !(Number.isSafeInteger(ms) && ms > 0)) {
        throw new InvalidInputError('invalid_option', `a TTL is a positive integer of ms, null (never) or undefined (the default), got ${String(ms)}`, {
          option: 'ttl',
        });
      }
      const d = handle();
      try {
        await (ms === undefined ? d.remove([c]) : d.put([c], ms));
        await d.flushed;
      } catch (error) {
        throw await commitFailure(error, path());
      }
    },
    get: (conversationId) => handle().get([validateConversationId(conversationId)]),
  };
}
