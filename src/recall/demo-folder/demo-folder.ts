import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidInputError } from '../../errors.ts';
import type { JsonObject, JsonValue } from '../../message.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import { decodeFolderName, encodeFolderName } from './folder-name.ts';
import { assertId } from '../recall-ids.ts';
import type { NewSummary } from '../../provider/summary-record.ts';

/**
 * Reading the demo's folder layout, safely:
 *
 * ```
 * {root}/{user_id}/memory.md                 long-term document
 *                  conversations.json        {session_id: {title, updated_at}}
 *                  sessions/{session_id}.jsonl
 *                  daily/YYYY-MM-DD.jsonl
 *                  logs/llm_dialogue.jsonl
 *                  summaries/{session_id}.jsonl   Mnemo's own: rolling summaries (not the Demo's)
 * ```
 *
 * Names become keys, so they are checked before anything is read: user folders and session
 * files are ids encoded as `folder-name.ts` writes them (the demo's own names are their own
 * encoding) and `conversations.json` keys are ids (recall-ids.ts), daily files real dates, else
 * `InvalidInputError('invalid_id')`. With `only`, the other folders under the root are not
 * looked at at all (a folder Mnemo cannot take does not stop the import of another). Symbolic links are refused anywhere (they could
 * lead out of the folder). Hidden entries (`.DS_Store`, ...) and files of other kinds are
 * ignored. A row must be a JSON object whose `role` and `content`, when present, are strings
 * (`invalid_message`, naming the file and line); everything else in a row is kept as it is.
 */
export interface DemoRow {
  /** The row as its file held it. */
  raw: JsonObject;
  /** Its line number in the file, from 1. */
  line: number;
  role: string;
  content: string;
  ts: string;
}

export interface DemoUser {
  userId: string;
  /** The raw text of memory.md, when the file exists. */
  memoryMd?: string;
  /** conversations.json entries in file order. */
  conversations: [string, JsonObject][];
  sessions: Map<string, DemoRow[]>;
  daily: Map<string, DemoRow[]>;
  log: JsonObject[];
  /** `summaries/{session}.jsonl`: each session's rolling summaries, in file order. */
  summaries: Map<string, NewSummary[]>;
}

export async function readDemoFolder(root: string, only?: readonly string[]): Promise<DemoUser[]> {
  await mustBeDirectory(root, root);
  const wanted = only ? new Set(only.map((u) => assertId('user_id', u))) : undefined;
  const wantedNames = wanted ? new Set([...wanted].map(encodeFolderName)) : undefined;
  const users: DemoUser[] = [];
  for (const name of await visibleEntries(root)) {
    if (wantedNames && !wantedNames.has(name)) continue;
    const path = join(root, name);
    const kind = await kindOf(path);
    if (kind !== 'directory') continue;
    users.push(await readUser(idOfName('user_id', name, path), path));
  }
  if (wanted) {
    for (const u of wanted) {
      if (!users.some((x) => x.userId === u)) {
        throw new InvalidInputError('invalid_option', `no folder for user ${u} under ${root}`, { userId: u });
      }
    }
  }
  return users;
}

async function readUser(userId: string, dir: string): Promise<DemoUser> {
  const user: DemoUser = { userId, conversations: [], sessions: new Map(), daily: new Map(), log: [], summaries: new Map() };
  const entries = new Set(await visibleEntries(dir));

  if (entries.has('memory.md') && (await kindOf(join(dir, 'memory.md'))) === 'file') {
    user.memoryMd = await readFile(join(dir, 'memory.md'), 'utf8');
  }
  if (entries.has('conversations.json') && (await kindOf(join(dir, 'conversations.json'))) === 'file') {
    const file = join(dir, 'conversations.json');
    const parsed = parseJson(await readFile(file, 'utf8'), file);
    if (!isObject(parsed)) throw bad(file, 'is not a JSON object');
    for (const [sessionId, entry] of Object.entries(parsed)) {
      assertId('session_id', sessionId);
      if (!isObject(entry)) throw bad(file, `entry ${JSON.stringify(sessionId)} is not an object`);
      user.conversations.push([sessionId, entry]);
    }
  }
  if (entries.has('sessions') && (await kindOf(join(dir, 'sessions'))) === 'directory') {
    for (const [stem, file] of await jsonlFiles(join(dir, 'sessions'))) {
      user.sessions.set(idOfName('session_id', stem, file), await readRows(file));
    }
  }
  if (entries.has('daily') && (await kindOf(join(dir, 'daily'))) === 'directory') {
    for (const [stem, file] of await jsonlFiles(join(dir, 'daily'))) {
      if (!isCalendarDay(stem)) {
        throw new InvalidInputError('invalid_id', `daily file ${file} is not named YYYY-MM-DD.jsonl`, { file });
      }
      user.daily.set(stem, await readRows(file));
    }
  }
  if (entries.has('summaries') && (await kindOf(join(dir, 'summaries'))) === 'directory') {
    for (const [stem, file] of await jsonlFiles(join(dir, 'summaries'))) {
      user.summaries.set(
        idOfName('session_id', stem, file),
        (await readObjects(file)).map(([raw, line]) => {
          const summary = summaryOf(raw);
          if (summary === undefined) throw bad(file, `line ${line} is not a summary {text, from, to, model, at, previous, method}`);
          return summary;
        }),
      );
    }
  }
  if (entries.has('logs') && (await kindOf(join(dir, 'logs'))) === 'directory') {
    const file = join(dir, 'logs', 'llm_dialogue.jsonl');
    if ((await visibleEntries(join(dir, 'logs'))).includes('llm_dialogue.jsonl') && (await kindOf(file)) === 'file') {
      user.log = (await readObjects(file)).map(([row]) => row);
    }
  }
  return user;
}

/** A summary line as the export writes it (`id` is not read: the import numbers them in order). */
function summaryOf(raw: JsonObject): NewSummary | undefined {
  const { text, from, to, model, at, previous, method } = raw;
  const whole = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (typeof text !== 'string' || !whole(from) || !whole(to) || typeof model !== 'string' || typeof at !== 'string') return undefined;
  if (previous !== null && !whole(previous)) return undefined;
  if (method !== 'llm' && method !== 'extractive') return undefined;
  return { text, from, to, model, at, previous, method };
}

async function jsonlFiles(dir: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for (const name of (await visibleEntries(dir)).sort()) {
    const path = join(dir, name);
    if (!name.endsWith('.jsonl') || (await kindOf(path)) !== 'file') continue;
    files.push([name.slice(0, -'.jsonl'.length), path]);
  }
  return files;
}

async function readRows(file: string): Promise<DemoRow[]> {
  return (await readObjects(file)).map(([raw, line]) => {
    const role = raw['role'] ?? '';
    const content = raw['content'] ?? '';
    if (typeof role !== 'string') throw bad(file, `line ${line}: role is not a string`);
    if (typeof content !== 'string') throw bad(file, `line ${line}: content is not a string`);
    const ts = typeof raw['ts'] === 'string' ? raw['ts'] : '';
    return { raw, line, role, content, ts };
  });
}

async function readObjects(file: string): Promise<[JsonObject, number][]> {
  const rows: [JsonObject, number][] = [];
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    const value = parseJson(text, `${file}:${i + 1}`);
    if (!isObject(value)) throw bad(file, `line ${i + 1} is not a JSON object`);
    rows.push([value, i + 1]);
  });
  return rows;
}

function parseJson(text: string, where: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (cause) {
    throw bad(where, `is not valid JSON (${(cause as Error).message})`);
  }
}

async function visibleEntries(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !name.startsWith('.'));
}

async function kindOf(path: string): Promise<'file' | 'directory' | 'other'> {
  const stat = await lstat(path);
  if (stat.isSymbolicLink()) {
    throw new InvalidInputError('invalid_id', `${path} is a symbolic link; the import follows none`, { path });
  }
  return stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : 'other';
}

async function mustBeDirectory(path: string, shown: string): Promise<void> {
  let kind: Awaited<ReturnType<typeof kindOf>>;
  try {
    kind = await kindOf(path);
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError('invalid_option', `${shown} is not a readable folder`, { path });
  }
  if (kind !== 'directory') throw new InvalidInputError('invalid_option', `${shown} is not a folder`, { path });
}

/** The id a folder or file name encodes, else `invalid_id`. */
function idOfName(kind: 'user_id' | 'session_id', name: string, path: string): string {
  const id = decodeFolderName(name);
  if (id === null) {
    throw new InvalidInputError('invalid_id', `${path}: ${JSON.stringify(name)} is not a ${kind} Mnemo can take as a name`, { path });
  }
  return assertId(kind, id);
}

function bad(where: string, what: string): InvalidInputError {
  return new InvalidInputError('invalid_message', `${where} ${what}`, { file: where });
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
