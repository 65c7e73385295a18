import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pythonJsonDumps } from '../../../src/recall/rows/python-json.ts';
import type { JsonValue } from '../../../src/memory/index.ts';

/**
 * The Agent Memory Demo's JSONL primitives, as its Python does them (reference §2, §3.1): a row
 * is `json.dumps(row, ensure_ascii=False)` on one line; an append reads THE WHOLE FILE to find
 * the next id (max of the back-filled ids + 1), then appends one line. Two changes for a fair
 * comparison: every append is made durable (`fdatasync` of the file, and of its directory when
 * the append created it), and appends to one file are serialized in-process (the demo has no
 * lock and can write duplicate ids).
 */
export interface DemoRow {
  ts: string;
  role: string;
  content: string;
  tags: string[];
  meta: Record<string, JsonValue>;
  message_id: number;
}

export async function readRows(path: string): Promise<Record<string, JsonValue>[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const rows: Record<string, JsonValue>[] = [];
  for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line) as Record<string, JsonValue>);
  return rows;
}

/** Python `int(value)` as the demo applies it; `null` when it fails or is <= 0. */
function parseId(value: JsonValue | undefined): number | null {
  let n: number;
  if (typeof value === 'number') n = Math.trunc(value);
  else if (typeof value === 'boolean') n = value ? 1 : 0;
  else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) n = Number.parseInt(value, 10);
  else return null;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** `_normalize_message_rows`: ids back-filled the way every read re-derives them. */
export function normalizeRows(rows: Record<string, JsonValue>[]): Record<string, JsonValue>[] {
  let next = 1;
  return rows.map((row) => {
    const id = parseId(row['message_id']) ?? next;
    next = Math.max(next, id + 1);
    return { ...row, message_id: id };
  });
}

export function nextMessageId(rows: Record<string, JsonValue>[]): number {
  let next = 1;
  for (const row of rows) {
    const id = parseId(row['message_id']) ?? next;
    next = Math.max(next, id + 1);
  }
  return next;
}

/** The demo's naive local timestamp, `YYYY-MM-DDTHH:MM:SS`. */
export function localSeconds(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}T${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

export function localDay(date = new Date()): string {
  return localSeconds(date).slice(0, 10);
}

export function dumpLine(row: Record<string, JsonValue>): string {
  return `${pythonJsonDumps(row)}\n`;
}

/** Appends `text` and waits for it to be on disk; a new file also syncs its directory. */
export async function appendDurably(path: string, text: string, created: boolean): Promise<void> {
  if (created) await mkdir(dirname(path), { recursive: true });
  const fh = await open(path, 'a');
  try {
    await fh.write(text);
    await fh.datasync();
  } finally {
    await fh.close();
  }
  if (created) await syncDir(dirname(path));
}

/** Replaces a whole file's contents durably (the demo rewrites conversations.json and memory.md in place). */
export async function writeDurably(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const fh = await open(path, 'w');
  try {
    await fh.write(text);
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** One in-process lock per file, so read-then-append never races with itself. */
export class FileLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(path: string, work: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(path) ?? Promise.resolve();
    const result = prev.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(path, tail);
    void tail.then(() => {
      if (this.tails.get(path) === tail) this.tails.delete(path);
    });
    return result;
  }
}

/**
 * `append_session_message` / `append_daily_message`: read the whole file, next id, append one
 * row `{ts, role, content, tags, meta, message_id}`. Returns the id it wrote.
 */
export async function appendMessageRow(
  locks: FileLocks,
  path: string,
  fields: { role: string; content: string; tag: 'session' | 'daily'; meta?: Record<string, JsonValue>; ts?: string },
): Promise<number> {
  return locks.run(path, async () => {
    const rows = await readRows(path);
    const id = nextMessageId(rows);
    const row: DemoRow = {
      ts: fields.ts ?? localSeconds(),
      role: fields.role,
      content: fields.content,
      tags: [fields.tag],
      meta: fields.meta ?? {},
      message_id: id,
    };
    await appendDurably(path, dumpLine(row as unknown as Record<string, JsonValue>), rows.length === 0);
    return id;
  });
}
