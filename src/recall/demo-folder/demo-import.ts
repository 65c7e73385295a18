import { InvalidInputError } from '../../errors.ts';
import type { NewEntry } from '../../memory/contract/message-log.ts';
import type { JsonObject } from '../../message.ts';
import { readDemoFolder, type DemoRow, type DemoUser } from './demo-folder.ts';
import { backfillMessageIds } from '../rows/legacy-message-id.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import { importDocument } from '../facts/facts-service.ts';
import type { NewDailyRecord, NewLogRecord, SessionEntry } from '../records/records.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { isValidId } from '../recall-ids.ts';
import { demoToolCalls } from '../rows/demo-tool-calls.ts';

/**
 * Import of the demo's folder layout (see demo-folder.ts for what is read and refused).
 *
 * - The whole folder is read and checked first; a bad name or row refuses the import before
 *   anything is written. A user who already has memory here is refused too (`invalid_option`):
 *   an import never merges into live data.
 * - Every row keeps the id the demo derives for it at read time (reference §3.1: a row without
 *   a valid `message_id` gets the next one, and the next is one above the highest so far), so
 *   anchors quoted in logs and tool outputs still name the same rows: `"7"` then a row without
 *   id are 7, 8; a session holding 3, 4 stays 3, 4; a day 2, 3, 5 keeps its hole. Only a row
 *   whose derived id repeats an earlier one in its file (the demo's unlocked appends, `[none,
 *   1]`) gets a new id after the file's highest; the report lists those rows. New rows continue
 *   after the highest. Parsing mirrors Python's `int()` for integers and numeric strings;
 *   booleans and floats count as missing. Session rows stay in file order; a day's rows are
 *   kept in id order (a day whose ids are not ascending in its file comes back sorted).
 * - Each row keeps its original JSON (in `meta.import`), so an export writes it back as it was.
 * - Mnemo's own `summaries/{session}.jsonl` (what an export wrote) come back as the session's
 *   rolling summaries, numbered 1, 2, ... in file order; those of a session with no rows file
 *   are left out.
 * - Daily rows are linked to a session when their `meta.session_id` names one (the demo's later
 *   versions wrote it); older daily rows belong to no session and survive a session's deletion.
 * - Everything imported is found by ranked recall (`recall.search`): daily rows and long-term
 *   lines are indexed as they are written; a session row is found through its daily twin, and
 *   one that no daily file holds (a folder without its daily files) gets a session document of
 *   its own (search/doc-numbers.ts; `rowsWithoutDaily` below says which), shown in no view.
 * - Storage failures midway leave the users imported so far in place (the writes are durable
 *   step by step, not one transaction).
 */
export interface ImportOptions {
  /** Import only these user folders (each must exist). Default: every user folder. */
  users?: string[];
}

/** What `recall.importDemoFolder` stored. */
export interface ImportReport {
  /** The users imported. */
  users: string[];
  /** Sessions stored. */
  sessions: number;
  /** Rows of `sessions/*.jsonl` stored. */
  sessionRows: number;
  /** Rows of `daily/*.jsonl` stored. */
  dailyRows: number;
  /** Rows of `logs/llm_dialogue.jsonl` stored. */
  logRows: number;
  /** `memory.md` documents stored (one per user that had one). */
  longTermDocuments: number;
  /** Rows whose demo id repeated an earlier row's in the same file, with the id each got. */
  renumbered: {
    /** The file, as `{user}/sessions/{id}.jsonl` or `{user}/daily/{day}.jsonl`. */
    file: string;
    /** Its line in the file, from 1. */
    line: number;
    /** The id the row had there. */
    demoId: number;
    /** The id it got. */
    id: number;
  }[];
}

const BATCH = 1_000;

export async function importDemoFolder(deps: RecallDeps, root: string, options: ImportOptions = {}): Promise<ImportReport> {
  const users = await readDemoFolder(root, options.users);
  for (const user of users) {
    if (await deps.store.hasData(user.userId)) {
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

async function importUser(deps: RecallDeps, user: DemoUser, report: ImportReport): Promise<void> {
  const { store } = deps;
  const u = user.userId;

  // The index first, in conversations.json order, then the session files it did not name.
  const named = new Set(user.conversations.map(([s]) => s));
  const sessions: SessionEntry[] = [
    ...user.conversations.map(([sessionId, raw]) => ({
      sessionId,
      title: typeof raw['title'] === 'string' ? raw['title'] : '',
      updatedAt: typeof raw['updated_at'] === 'string' ? raw['updated_at'] : '',
      listed: true,
      imported: raw,
      ...demoIdsOf(user.sessions.get(sessionId)),
    })),
    ...[...user.sessions.keys()]
      .filter((sessionId) => !named.has(sessionId))
      .map((sessionId) => ({ sessionId, title: '', updatedAt: '', listed: false, ...demoIdsOf(user.sessions.get(sessionId)) })),
  ].map((entry, i) => ({ ...entry, order: i + 1 }));
  await store.importBatch(u, { sessions });
  report.sessions += sessions.length;

  const sessionIds = new Map<string, number[]>();
  for (const [sessionId, rows] of user.sessions) {
    const ids = assignIds(report, `${u}/sessions/${sessionId}.jsonl`, rows);
    sessionIds.set(sessionId, ids);
    const keepIds = !isOneToN(ids);
    for (let i = 0; i < rows.length; i += BATCH) {
      const entries: NewEntry[] = rows.slice(i, i + BATCH).map((row, j) => ({
        message: { role: row.role === 'assistant' ? 'assistant' : 'user', content: row.content },
        meta: { ts: row.ts, ...(keepIds ? { message_id: ids[i + j]! } : {}), import: withoutContent(row.raw) },
      }));
      await store.importBatch(u, { transcript: { sessionId, entries } });
    }
    report.sessionRows += rows.length;
  }
  for (const [sessionId, entries] of user.summaries) {
    if (user.sessions.has(sessionId) && entries.length > 0) await store.importBatch(u, { summaries: { sessionId, entries } });
  }

  for (const [day, rows] of user.daily) {
    const ids = assignIds(report, `${u}/daily/${day}.jsonl`, rows);
    for (let i = 0; i < rows.length; i += BATCH) {
      const daily = rows.slice(i, i + BATCH).map((row, j): NewDailyRecord => {
        const meta = row.raw['meta'];
        const sid = isObject(meta) && typeof meta['session_id'] === 'string' && isValidId(meta['session_id']) ? meta['session_id'] : null;
        const toolCalls = isObject(meta) ? demoToolCalls(meta['tool_calls']) : [];
        return {
          day,
          id: ids[i + j]!,
          ts: row.ts,
          role: row.role,
          content: row.content,
          sessionId: sid,
          sessionMessageId: null,
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          imported: withoutContent(row.raw),
        };
      });
      await store.importBatch(u, { daily });
    }
    report.dailyRows += rows.length;
  }

  // The session rows no daily file holds: documents of their own, so ranked recall finds them.
  const docs = rowsWithoutDaily(user, sessionIds);
  for (let i = 0; i < docs.length; i += BATCH) await store.importBatch(u, { sessionDocs: docs.slice(i, i + BATCH) });

  if (user.memoryMd !== undefined) {
    await importDocument(deps, u, user.memoryMd);
    report.longTermDocuments += 1;
  }

  for (let i = 0; i < user.log.length; i += BATCH) {
    const log = user.log.slice(i, i + BATCH).map((raw): NewLogRecord => ({
      ts: text(raw['ts']),
      sessionId: isValidId(raw['session_id']) ? raw['session_id'] : '',
      userMessage: text(raw['user_message']),
      assistantReply: text(raw['assistant_reply']),
      memoryContext: text(raw['memory_context']),
      toolCalls: demoToolCalls(raw['tool_calls']),
      imported: raw,
    }));
    await store.importBatch(u, { log });
  }
  report.logRows += user.log.length;
  await store.importBatch(u, { complete: true });
}

/**
 * The user's session rows that no daily row of the folder holds, as session documents. The
 * demo writes every row to its session file and then to the daily file of that moment, so a
 * session row's daily twin is a daily row with the same role and content on the day its `ts`
 * names, or the next (a turn across midnight), naming the same session in `meta.session_id` or
 * none; each daily row is the twin of one session row at most (a repeated "ok" is matched once
 * per copy). A session row with no twin, or whose `ts` names no day, is returned.
 */
function rowsWithoutDaily(user: DemoUser, sessionIds: ReadonlyMap<string, number[]>): Array<NewDailyRecord & { sessionId: string; sessionMessageId: number }> {
  const twins = new Map<string, number>();
  const twinKey = (day: string, sessionId: string, role: string, content: string) => JSON.stringify([day, sessionId, role, content]);
  for (const [day, rows] of user.daily) {
    for (const row of rows) {
      const meta = row.raw['meta'];
      const sid = isObject(meta) && typeof meta['session_id'] === 'string' && isValidId(meta['session_id']) ? meta['session_id'] : '';
      const key = twinKey(day, sid, row.role, row.content);
      twins.set(key, (twins.get(key) ?? 0) + 1);
    }
  }
  const claim = (key: string): boolean => {
    const n = twins.get(key) ?? 0;
    if (n > 0) twins.set(key, n - 1);
    return n > 0;
  };
  const out: Array<NewDailyRecord & { sessionId: string; sessionMessageId: number }> = [];
  for (const [sessionId, rows] of user.sessions) {
    const ids = sessionIds.get(sessionId)!;
    rows.forEach((row, i) => {
      const day = dayOfTs(row.ts);
      const days = day === '' ? [] : [day, nextDay(day)];
      if (days.some((d) => claim(twinKey(d, sessionId, row.role, row.content)) || claim(twinKey(d, '', row.role, row.content)))) return;
      const meta = row.raw['meta'];
      const toolCalls = isObject(meta) ? demoToolCalls(meta['tool_calls']) : [];
      out.push({
        day,
        ts: row.ts,
        role: row.role,
        content: row.content,
        sessionId,
        sessionMessageId: ids[i]!,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      });
    });
  }
  return out;
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** The row without its content (stored once, as the message), keeping the key's place. */
function withoutContent(raw: JsonObject): JsonObject {
  return 'content' in raw ? { ...raw, content: null } : { ...raw };
}

/** The demo's read-time ids, a repeated one replaced by the next after the file's highest. */
function demoIds(rows: readonly DemoRow[]): { ids: number[]; repeats: { index: number; demoId: number }[] } {
  const derived = backfillMessageIds(rows.map((r) => r.raw['message_id']));
  let high = derived.reduce((a, b) => Math.max(a, b), 0);
  const seen = new Set<number>();
  const repeats: { index: number; demoId: number }[] = [];
  const ids = derived.map((id, index) => {
    if (!seen.has(id)) {
      seen.add(id);
      return id;
    }
    repeats.push({ index, demoId: id });
    return ++high;
  });
  return { ids, repeats };
}

function assignIds(report: ImportReport, file: string, rows: readonly DemoRow[]): number[] {
  const { ids, repeats } = demoIds(rows);
  for (const { index, demoId } of repeats) report.renumbered.push({ file, line: rows[index]!.line, demoId, id: ids[index]! });
  return ids;
}

function isOneToN(ids: readonly number[]): boolean {
  return ids.every((id, i) => id === i + 1);
}

/** The calendar day a Demo `ts` (`YYYY-MM-DDTHH:MM:SS`) starts with, else `''`. */
function dayOfTs(ts: string): string {
  const day = ts.slice(0, 10);
  return isCalendarDay(day) ? day : '';
}

/** The session entry's `demoIds` when its file's ids are not 1..n. */
function demoIdsOf(rows: readonly DemoRow[] | undefined): Pick<SessionEntry, 'demoIds'> {
  if (rows === undefined) return {};
  const { ids } = demoIds(rows);
  if (isOneToN(ids)) return {};
  return { demoIds: { rows: ids.length, shift: ids.reduce((a, b) => Math.max(a, b), 0) - ids.length } };
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
