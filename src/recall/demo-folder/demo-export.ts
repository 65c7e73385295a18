import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidInputError } from '../../errors.ts';
import type { JsonObject, JsonValue, StoredMessage } from '../../message.ts';
import { UNTITLED } from '../rows/session-title.ts';
import { checkNameLength, encodeFolderName } from './folder-name.ts';
import { memoryFile } from '../facts/fact-document.ts';
import { ensureFactsConverted } from '../facts/facts-service.ts';
import type { ToolCallView } from '../rows/row-types.ts';
import { pythonJsonDumps } from '../rows/python-json.ts';
import type { DailyRecord, LogRecord, SessionEntry } from '../records/records.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { assertId, sessionConversationId } from '../recall-ids.ts';
import { toSessionRow } from '../rows/session-row.ts';
import { listSummaries } from '../../provider/summary-record.ts';

/**
 * Export to the demo's folder layout (the inverse of demo-import.ts), one folder per user:
 * `memory.md` (the long-term document the facts render, `{text}\n` as the demo wrote it; an
 * imported file unchanged since, byte for byte: facts/fact-document.ts),
 * `conversations.json` (listed sessions in creation order, Python's `indent=2`),
 * `sessions/{id}.jsonl`, `daily/YYYY-MM-DD.jsonl`, `logs/llm_dialogue.jsonl` (lines as
 * Python's `json.dumps(row, ensure_ascii=False)` writes them), and Mnemo's own
 * `summaries/{id}.jsonl`: a session's rolling summaries, oldest first, one
 * `{id, text, from, to, model, at, previous, method}` a line (the Demo reads no such folder).
 *
 * Imported rows are written back from their original JSON (a legacy row without `message_id`
 * stays without one: the demo back-fills it on read); rows Mnemo wrote get the demo's shape
 * `{ts, role, content, tags, meta, message_id}` with `meta.tool_calls` when the reply used
 * tools, `meta.error` for a failed turn, and `meta.session_id` on daily rows. So an import
 * followed by an export gives back the same JSON in every file (key order included), and the
 * same bytes wherever Python's number formatting agrees with JSON's.
 *
 * Folder and file names are the ids encoded by `folder-name.ts` (the demo's usual ids are
 * their own names). An id whose name would exceed 255 bytes is refused (`invalid_id`) before
 * anything is written. A user's folder must not exist yet or be empty (`invalid_option`): an
 * export never merges.
 */
export interface ExportOptions {
  /** Export only these users. Default: every user with memory here. */
  users?: string[];
}

/** What `recall.exportDemoFolder` wrote. */
export interface ExportReport {
  /** The users exported. */
  users: string[];
  /** Files written. */
  files: number;
}

export async function exportDemoFolder(deps: RecallDeps, root: string, options: ExportOptions = {}): Promise<ExportReport> {
  const users = options.users ? options.users.map((u) => assertId('user_id', u)) : await deps.store.users();
  const dirs = new Map(users.map((u) => [u, join(root, checkNameLength(encodeFolderName(u), u))]));
  for (const u of users) for (const entry of await deps.store.sessions(u)) sessionFileName(entry.sessionId);
  for (const dir of dirs.values()) await mustBeFresh(dir);
  let files = 0;
  for (const u of users) files += await exportUser(deps, u, dirs.get(u)!);
  return { users, files };
}

async function exportUser(deps: RecallDeps, userId: string, dir: string): Promise<number> {
  const { store } = deps;
  let files = 0;
  const write = async (path: string, text: string) => {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, text, 'utf8');
    files++;
  };
  await mkdir(dir, { recursive: true });

  // The document the facts render (an imported file and its lines: byte for byte).
  const memoryMd = memoryFile(await ensureFactsConverted(deps, userId));
  if (memoryMd !== undefined) await write(join(dir, 'memory.md'), memoryMd);

  const entries = await store.sessions(userId);
  const listed = entries.filter((e) => e.listed);
  if (listed.length > 0) {
    const index: JsonObject = {};
    for (const entry of listed) index[entry.sessionId] = indexEntry(entry);
    await write(join(dir, 'conversations.json'), pythonJsonDumps(index, 2));
  }

  for (const entry of entries) {
    const records = await deps.memory.range(sessionConversationId(userId, entry.sessionId));
    if (records.length === 0) continue;
    const shift = entry.demoIds?.shift ?? 0;
    await write(join(dir, 'sessions', sessionFileName(entry.sessionId)), lines(records.map((r) => sessionLine(r, shift))));
    const summaries = await listSummaries(deps.memory, sessionConversationId(userId, entry.sessionId));
    if (summaries.length > 0) await write(join(dir, 'summaries', sessionFileName(entry.sessionId)), lines(summaries.map((s) => ({ ...s }))));
  }

  for (const day of await store.days(userId)) {
    await write(join(dir, 'daily', `${day}.jsonl`), lines((await store.dailyDay(userId, day)).map(dailyLine)));
  }

  const log = await store.dialogueLog(userId);
  if (log.length > 0) await write(join(dir, 'logs', 'llm_dialogue.jsonl'), lines(log.map(logLine)));
  return files;
}

function sessionFileName(sessionId: string): string {
  return checkNameLength(`${encodeFolderName(sessionId)}.jsonl`, sessionId);
}

/** An imported entry is written back as it was, with only what changed since replaced. */
function indexEntry(entry: SessionEntry): JsonObject {
  const imported = entry.imported;
  if (!imported) return { title: entry.title || UNTITLED, updated_at: entry.updatedAt };
  const out: JsonObject = { ...imported };
  if (entry.title !== stringOr(imported['title'])) out['title'] = entry.title;
  if (entry.updatedAt !== stringOr(imported['updated_at'])) out['updated_at'] = entry.updatedAt;
  return out;
}

function stringOr(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : '';
}

function sessionLine(record: StoredMessage, shift: number): JsonObject {
  const imported = record.meta['import'];
  if (isObject(imported)) return restore(imported, record.message.content);
  const row = toSessionRow(record, shift);
  return demoRow(row.ts, row.role, row.content, 'session', row.messageId, row.toolCalls, record.meta['error']);
}

function dailyLine(value: DailyRecord): JsonObject {
  if (value.imported) return restore(value.imported, value.content);
  const meta = demoMeta(value.toolCalls ?? [], value.error ? { ...value.error } : undefined);
  if (value.sessionId !== null) meta['session_id'] = value.sessionId;
  return { ts: value.ts, role: value.role, content: value.content, tags: ['daily'], meta, message_id: value.id };
}

function logLine(value: LogRecord): JsonObject {
  if (value.imported) return value.imported;
  const row: JsonObject = {
    ts: value.ts,
    session_id: value.sessionId,
    user_message: value.userMessage,
    assistant_reply: value.assistantReply,
    memory_context: value.memoryContext,
    tool_calls: value.toolCalls.map((c) => ({ ...c })),
  };
  if (value.error) row['error'] = { ...value.error };
  return row;
}

function demoRow(
  ts: string,
  role: string,
  content: string,
  tag: 'session' | 'daily',
  id: number,
  toolCalls: ToolCallView[],
  error: JsonValue | undefined,
): JsonObject {
  return { ts, role, content, tags: [tag], meta: demoMeta(toolCalls, error), message_id: id };
}

function demoMeta(toolCalls: ToolCallView[], error: JsonValue | undefined): JsonObject {
  const meta: JsonObject = {};
  if (toolCalls.length > 0) meta['tool_calls'] = toolCalls.map((c) => ({ ...c }));
  if (isObject(error)) meta['error'] = error;
  return meta;
}

/** The original row with its content put back in its place. */
function restore(raw: JsonObject, content: JsonValue | undefined): JsonObject {
  return 'content' in raw ? { ...raw, content: typeof content === 'string' ? content : '' } : raw;
}

function lines(rows: JsonObject[]): string {
  return rows.map((r) => `${pythonJsonDumps(r)}\n`).join('');
}

async function mustBeFresh(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  if (entries.length > 0) {
    throw new InvalidInputError('invalid_option', `${dir} is not empty; an export never merges`, { path: dir });
  }
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
