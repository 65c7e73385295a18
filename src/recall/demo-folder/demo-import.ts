import { InvalidInputError } from '../../errors.ts';
import type { NewEntry } from '../../memory/contract/message-log.ts';
import type { JsonObject } from '../../message.ts';
import { putDailyRow } from '../store/daily-store.ts';
import { readDemoFolder, type DemoRow, type DemoUser } from './demo-folder.ts';
import { putLogRow } from '../store/dialogue-log.ts';
import { backfillMessageIds } from '../store/legacy-message-id.ts';
import { writeLongTerm } from '../store/long-term-store.ts';
import { commit, HIGH, nextCounter, type LogValue, type SessionEntry } from '../store/recall-dbs.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';
import { demoToolCalls } from '../store/demo-tool-calls.ts';

/**
 * Import of the demo's folder layout (see demo-folder.ts for what is read and refused).
 *
 * - The whole folder is read and checked first; a bad name or row refuses the import before
 *   anything is written. A user who already has memory here is refused too (`invalid_option`):
 *   an import never merges into live data.
 * - Rows are stored in file order and numbered 1, 2, 3, ... per session and per day. That is
 *   the demo's own numbering whenever the file's ids were regular, which includes legacy rows
 *   without `message_id`: the demo back-fills those at read time (reference §3.1), and so the
 *   numbers match. Files whose effective ids were irregular (duplicates from the demo's
 *   unlocked appends, gaps, hand edits) are renumbered; the report lists them. Parsing mirrors
 *   Python's `int()` for integers and numeric strings; booleans and floats count as missing.
 * - Each row keeps its original JSON (in `meta.import`), so an export writes it back as it was.
 * - Daily rows are linked to a session when their `meta.session_id` names one (the demo's later
 *   versions wrote it); older daily rows belong to no session and survive a session's deletion.
 * - Storage failures midway leave the users imported so far in place (the writes are durable
 *   step by step, not one transaction).
 */
export interface ImportOptions {
  /** Import only these user folders (each must exist). Default: every user folder. */
  users?: string[];
}

export interface ImportReport {
  users: string[];
  sessions: number;
  sessionRows: number;
  dailyRows: number;
  logRows: number;
  longTermDocuments: number;
  /** Files whose rows were numbered differently from the demo's effective ids. */
  renumbered: { file: string; rows: number }[];
}

const BATCH = 1_000;

export async function importDemoFolder(deps: RecallDeps, root: string, options: ImportOptions = {}): Promise<ImportReport> {
  const users = await readDemoFolder(root, options.users);
  for (const user of users) {
    if (hasMemory(deps, user.userId)) {
      throw new InvalidInputError('invalid_option', `user ${user.userId} already has memory here; an import never merges`, {
        userId: user.userId,
      });
    }
  }
  const report: ImportReport = {
    users: users.map((u) => u.userId),
    sessions: 0,
    sessionRows: 0,
    dailyRows: 0,
    logRows: 0,
    longTermDocuments: 0,
    renumbered: [],
  };
  for (const user of users) await importUser(deps, user, report);
  return report;
}

function hasMemory(deps: RecallDeps, userId: string): boolean {
  const { dbs } = deps;
  const range = { start: [userId], end: [userId, HIGH], limit: 1 };
  return [dbs.sessions, dbs.daily, dbs.longTerm, dbs.log].some((db) => [...db.getKeys(range)].length > 0);
}

async function importUser(deps: RecallDeps, user: DemoUser, report: ImportReport): Promise<void> {
  const { dbs } = deps;
  const u = user.userId;
  const now = localNow(deps).ts;

  // The index first, in conversations.json order, then the session files it did not name.
  await commit(dbs, () => {
    // High-water marks left by deleted sessions would shift the imported days' numbering.
    const stale = [...dbs.counters.getKeys({ start: [u, 'daily-high'], end: [u, 'daily-high', HIGH] })];
    for (const key of stale) dbs.counters.remove(key);
    const named = new Set<string>();
    for (const [sessionId, raw] of user.conversations) {
      named.add(sessionId);
      dbs.sessions.put([u, sessionId], {
        title: typeof raw['title'] === 'string' ? raw['title'] : '',
        updated_at: typeof raw['updated_at'] === 'string' ? raw['updated_at'] : '',
        order: nextCounter(dbs, 'session-order', u),
        listed: true,
        import: raw,
      } satisfies SessionEntry);
    }
    for (const sessionId of user.sessions.keys()) {
      if (named.has(sessionId)) continue;
      dbs.sessions.put([u, sessionId], {
        title: '',
        updated_at: '',
        order: nextCounter(dbs, 'session-order', u),
        listed: false,
      } satisfies SessionEntry);
    }
  });
  report.sessions += new Set([...user.conversations.map(([s]) => s), ...user.sessions.keys()]).size;

  for (const [sessionId, rows] of user.sessions) {
    noteRenumbered(report, `${u}/sessions/${sessionId}.jsonl`, rows);
    const conversationId = sessionConversationId(u, sessionId);
    for (let i = 0; i < rows.length; i += BATCH) {
      const entries: NewEntry[] = rows.slice(i, i + BATCH).map((row) => ({
        message: { role: row.role === 'assistant' ? 'assistant' : 'user', content: row.content },
        meta: { ts: row.ts, import: withoutContent(row.raw) },
      }));
      await deps.memory.append(conversationId, entries);
    }
    report.sessionRows += rows.length;
  }

  for (const [day, rows] of user.daily) {
    noteRenumbered(report, `${u}/daily/${day}.jsonl`, rows);
    for (let i = 0; i < rows.length; i += BATCH) {
      const chunk = rows.slice(i, i + BATCH);
      await commit(dbs, () => {
        for (const row of chunk) {
          const meta = row.raw['meta'];
          const sid = isObject(meta) && typeof meta['session_id'] === 'string' && VALID.test(meta['session_id']) ? meta['session_id'] : null;
          const toolCalls = isObject(meta) ? demoToolCalls(meta['tool_calls']) : [];
          putDailyRow(dbs, u, {
            day,
            ts: row.ts,
            role: row.role,
            content: row.content,
            session_id: sid,
            session_message_id: null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            import: withoutContent(row.raw),
          });
        }
      });
    }
    report.dailyRows += rows.length;
  }

  if (user.memoryMd !== undefined) {
    const text = user.memoryMd;
    await commit(dbs, () => writeLongTerm(dbs, u, text, 'import', now, text));
    report.longTermDocuments += 1;
  }

  for (let i = 0; i < user.log.length; i += BATCH) {
    const chunk = user.log.slice(i, i + BATCH);
    await commit(dbs, () => {
      for (const raw of chunk) {
        const sessionId = typeof raw['session_id'] === 'string' ? raw['session_id'] : '';
        const value: Omit<LogValue, 'seq'> = {
          ts: text(raw['ts']),
          session_id: sessionId,
          user_message: text(raw['user_message']),
          assistant_reply: text(raw['assistant_reply']),
          memory_context: text(raw['memory_context']),
          tool_calls: demoToolCalls(raw['tool_calls']),
          import: raw,
        };
        putLogRow(dbs, u, VALID.test(sessionId) ? sessionId : '', value);
      }
    });
  }
  report.logRows += user.log.length;
}

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

/** The row without its content (stored once, as the message), keeping the key's place. */
function withoutContent(raw: JsonObject): JsonObject {
  return 'content' in raw ? { ...raw, content: null } : { ...raw };
}

function noteRenumbered(report: ImportReport, file: string, rows: readonly DemoRow[]): void {
  const effective = backfillMessageIds(rows.map((r) => r.raw['message_id']));
  const differing = effective.filter((id, i) => id !== i + 1).length;
  if (differing > 0) report.renumbered.push({ file, rows: differing });
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
