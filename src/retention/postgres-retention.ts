import type { PostgresStore } from '../memory/postgres/index.ts';
import { postgresStoreInternals } from '../memory/postgres/postgres-store.ts';
import { summaryConversationId } from '../provider/summary-record.ts';
import { createPgContext } from '../recall/storage/postgres/pg-recall-context.ts';
import { InvalidInputError } from '../errors.ts';
import { validateConversationId } from '../memory/contract/validate-input.ts';
import type { RetentionStorage, TtlOverrides } from './retention-sweep.ts';

/**
 * The retention sweep's storage (retention-sweep.ts) on PostgreSQL, over the message store's
 * tables and recall's, in their schema: conversations by their counter rows (`conversations`,
 * one per conversation that has rows, ids `COLLATE "C"`, so the order is the ids' bytes as on
 * LMDB), sessions by `recall_sessions`. The conditional clear is one transaction that locks
 * the conversation's counter row (appends from every process take it too), compares its last
 * id, then clears the conversation and its summaries' companion: no write can land between.
 */
export function postgresRetentionStorage(transcripts: PostgresStore): RetentionStorage {
  const internals = postgresStoreInternals(transcripts);
  if (internals === undefined) throw new TypeError('postgresRetentionStorage needs a store made by createPostgresStore');
  const ctx = createPgContext(internals, false);
  return {
    async conversationAfter(after) {
      const rows = await ctx.read<{ id: string }>(
        after === undefined
          ? `SELECT conversation_id AS id FROM ${ctx.s}.conversations ORDER BY conversation_id LIMIT 1`
          : `SELECT conversation_id AS id FROM ${ctx.s}.conversations WHERE conversation_id > $1 ORDER BY conversation_id LIMIT 1`,
        after === undefined ? [] : [after],
      );
      return rows[0]?.id;
    },
    async last(c) {
      const [record] = await transcripts.tail(c, 1);
      return record === undefined ? undefined : { id: record.message_id, ts: record.ts };
    },
    clearIfLastId: (c, lastId) =>
      ctx.tx(async (client) => {
        if ((await internals.lastId(client, c, true)) !== lastId) return false;
        await internals.clear(client, c);
        await internals.clear(client, summaryConversationId(c));
        return true;
      }),
    async sessionsAfter(after, limit) {
      const rows = await ctx.read<{ user_id: string; session_id: string }>(
        after === undefined
          ? `SELECT user_id, session_id FROM ${ctx.s}.recall_sessions ORDER BY user_id, session_id LIMIT $1`
          : `SELECT user_id, session_id FROM ${ctx.s}.recall_sessions WHERE (user_id, session_id) > ($2, $3) ORDER BY user_id, session_id LIMIT $1`,
        after === undefined ? [limit] : [limit, after[0], after[1]],
      );
      return rows.map((r) => [r.user_id, r.session_id]);
    },
  };
}

/**
 * Per-conversation TTLs on PostgreSQL: `conversation_ttl` of the message store's schema (a row:
 * ms, or NULL for never; no row: `idleTtlMs`), erased with their conversation (the store's
 * erasure deletes them with its other rows), and removed by the sweep when it clears one.
 */
export function postgresTtls(transcripts: PostgresStore): TtlOverrides {
  const internals = postgresStoreInternals(transcripts);
  if (internals === undefined) throw new TypeError('postgresTtls needs a store made by createPostgresStore');
  const ctx = createPgContext(internals, false);
  return {
    async get(conversationId) {
      const rows = await ctx.read<{ ttl_ms: string | null }>(`SELECT ttl_ms FROM ${ctx.s}.conversation_ttl WHERE conversation_id = $1`, [validateConversationId(conversationId)]);
      return rows[0] === undefined ? undefined : rows[0].ttl_ms === null ? null : Number(rows[0].ttl_ms);
    },
    async set(conversationId, ms) {
      const c = validateConversationId(conversationId);
      if (ms !== undefined && ms !== null && !(Number.isSafeInteger(ms) && ms > 0)) {
        throw new InvalidInputError('invalid_option', `a TTL is a positive integer of ms, null (never) or undefined (the default), got ${String(ms)}`, {
          option: 'ttl',
        });
      }
      if (ms === undefined) await ctx.read(`DELETE FROM ${ctx.s}.conversation_ttl WHERE conversation_id = $1`, [c]);
      else {
        await ctx.read(
          `INSERT INTO ${ctx.s}.conversation_ttl (conversation_id, ttl_ms) VALUES ($1, $2) ON CONFLICT (conversation_id) DO UPDATE SET ttl_ms = EXCLUDED.ttl_ms`,
          [c, ms],
        );
      }
    },
  };
}
