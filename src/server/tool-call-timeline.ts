/**
 * The tool-call timeline of one user: every tool call of every session, newest turn first
 * (calls of one turn in the order they were made), each with what links it to its turn: the
 * session, the session's title and the `message_id` of the assistant row that carries it (the
 * same anchor as in `/messages` items), plus the user message that started the turn.
 *
 * Read from the session rows (not the dialogue log, whose rows carry no `message_id`), so a
 * deleted session's calls are gone with it, and a failed turn's calls are listed too.
 *
 * Filters: `tool`, the exact tool name (`''`: any); `keyword`, a case-insensitive substring of
 * the name, the arguments, the output or the turn's user message (`''`: any); at most `limit`
 * items (1..500).
 *
 * Bounded: one request reads at most `TIMELINE_SCAN_ROWS` session rows, newest first, merged
 * across sessions: a session is opened only once its `updated_at` (no row of it is newer) is the
 * newest still to read, and read backwards a chunk at a time. So a user with many long sessions
 * costs a request what it shows, not their whole history. When the scan stops (the limit, or the
 * row budget) with more to read, `nextCursor` resumes it: it names a place in the order
 * (`ts` newest first, then session id, then anchor newest first, then call index), and a resumed
 * scan finds each session's place by a binary search on `ts` (rows are stored in time order).
 */
import { decodeCursor, encodeCursor } from './page-cursor.ts';
import type { SessionRow, SessionSummary, ToolCallView } from '../recall/index.ts';
import type { RecallApi } from './services.ts';

export interface ToolCallTimelineQuery {
  userId: string;
  tool: string;
  keyword: string;
  limit: number;
  /** A previous answer's `nextCursor`; `''`: from the newest. */
  cursor: string;
}

export interface ToolCallTimelineItem extends ToolCallView {
  session_id: string;
  title: string;
  /** The anchor of the assistant row in its session. */
  message_id: number;
  ts: string;
  /** The user message of the turn (`''` when the row before it is not a user row). */
  user_message: string;
  /** 0-based position among the turn's calls. */
  index: number;
  /** Set when the turn failed (the calls it made before failing are still listed). */
  failed?: true;
}

export interface ToolCallTimeline {
  items: ToolCallTimelineItem[];
  /** Where the next page starts; `null` when every call was listed. */
  nextCursor: string | null;
}

export const TIMELINE_MAX_LIMIT = 500;
/** Session rows one request reads at most (then it answers what it found, and a cursor). */
export const TIMELINE_SCAN_ROWS = 5_000;
/** Rows read from a session at a time (one more: the context of the first). */
export const TIMELINE_CHUNK_ROWS = 100;
const CHUNK = TIMELINE_CHUNK_ROWS;

/** A place in the timeline's order: `[ts, session_id, anchor, call index]`. */
type Key = readonly [ts: string, sessionId: string, anchor: number, index: number];
/** Above every anchor: a session's bound comes before all of its calls. */
const TOP = Number.MAX_SAFE_INTEGER;

/** Negative when `a` comes first (newer), positive when `b` does. */
function compare(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] > b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  if (a[2] !== b[2]) return b[2] - a[2];
  return a[3] - b[3];
}

export type TimelineReader = Pick<RecallApi, 'listSessions' | 'sessionMessagesPage'>;
type Reader = TimelineReader;

/** One session being read backwards. */
interface Stream {
  session: SessionSummary;
  /** Its next calls, in the timeline's order. */
  pending: ToolCallTimelineItem[];
  /** Where the next chunk ends (exclusive record id); `null`: not opened yet. */
  before: number | null;
  more: boolean;
  /** What the stream stands on in the merge: its next call, or a bound of what is left of it
   *  (unopened: its `updated_at`, no row of it is newer). */
  key: Key;
  /** Comes after every row read so far. */
  floor: Key;
}

export async function toolCallTimeline(recall: Reader, query: ToolCallTimelineQuery, scanRows = TIMELINE_SCAN_ROWS): Promise<ToolCallTimeline> {
  const limit = Math.min(Math.max(Math.trunc(query.limit) || 1, 1), TIMELINE_MAX_LIMIT);
  const keyword = query.keyword.trim().toLowerCase();
  const userId = query.userId;
  // [key, inclusive]: a scan resumes at (inclusive) or after the key.
  const resume = query.cursor === '' ? undefined : decodeCursor('t', query.cursor, ['string', 'string', 'number', 'number', 'number']);
  const from: { key: Key; inclusive: boolean } | undefined =
    resume === undefined ? undefined : { key: [resume[0], resume[1], resume[2], resume[3]], inclusive: resume[4] === 1 };
  const wanted = (key: Key): boolean => {
    if (from === undefined) return true;
    const c = compare(key, from.key);
    return c > 0 || (c === 0 && from.inclusive);
  };

  const heap = new StreamHeap();
  for (const session of await recall.listSessions(userId)) {
    const bound: Key = [session.updatedAt, session.sessionId, TOP, 0];
    heap.push({ session, pending: [], before: null, more: true, key: bound, floor: bound });
  }
  let budget = scanRows;
  const items: ToolCallTimelineItem[] = [];

  /** Reads the stream's next chunk into `pending`; false when the budget is spent. */
  const readChunk = async (stream: Stream): Promise<boolean> => {
    if (budget <= 0) return false;
    const sid = stream.session.sessionId;
    if (stream.before === null) stream.before = await startOf(recall, userId, sid, from?.key[0]);
    const page = await recall.sessionMessagesPage(userId, sid, { before: stream.before, limit: CHUNK + 1 });
    budget -= page.rows.length;
    // With more before it, the chunk's first row is only the context of the second.
    const skip = page.more ? 1 : 0;
    const found: ToolCallTimelineItem[] = [];
    for (let i = page.rows.length - 1; i >= skip; i--) {
      const row = page.rows[i]!;
      if (row.role !== 'assistant' || row.toolCalls.length === 0) continue;
      found.push(...callsOf(stream.session, row, page.rows[i - 1]).filter((item) => wanted(keyOf(item)) && passes(item, query.tool, keyword)));
    }
    stream.pending.push(...found);
    stream.more = page.more;
    stream.before = page.firstId + skip;
    // What is left of the session comes after every row of this chunk.
    const oldest = page.rows[skip];
    if (oldest !== undefined) stream.floor = [oldest.ts, sid, oldest.messageId, TOP];
    return true;
  };

  let stopped: Key | undefined;
  while (heap.size > 0) {
    const stream = heap.pop()!;
    if (stream.pending.length === 0) {
      if (!stream.more) continue;
      if (!(await readChunk(stream))) {
        stopped = stream.key;
        break;
      }
      if (stream.pending.length > 0) stream.key = keyOf(stream.pending[0]!);
      else if (stream.more) stream.key = stream.floor;
      else continue;
      heap.push(stream);
      continue;
    }
    const item = stream.pending.shift()!;
    items.push(item);
    if (stream.pending.length > 0) stream.key = keyOf(stream.pending[0]!);
    else if (stream.more) stream.key = stream.floor;
    const left = stream.pending.length > 0 || stream.more;
    if (left) heap.push(stream);
    if (items.length === limit) {
      if (heap.size > 0) stopped = [item.ts, item.session_id, item.message_id, item.index + 1];
      break;
    }
  }
  return { items, nextCursor: stopped === undefined ? null : encodeCursor('t', [...stopped, 1]) };
}

function keyOf(item: ToolCallTimelineItem): Key {
  return [item.ts, item.session_id, item.message_id, item.index];
}

/**
 * Where reading a session backwards starts: after its newest row, or, resuming at `ts`, after
 * its last row not newer than `ts` (a binary search by record id; rows are in time order).
 */
async function startOf(recall: Reader, userId: string, sessionId: string, ts: string | undefined): Promise<number> {
  const newest = await recall.sessionMessagesPage(userId, sessionId, { limit: 1 });
  const last = newest.rows.length === 0 ? 0 : newest.firstId;
  if (ts === undefined || last === 0 || newest.rows[0]!.ts <= ts) return last + 1;
  // The first record id whose row is newer than `ts`, in [1, last].
  let lo = 1;
  let hi = last;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const [row] = (await recall.sessionMessagesPage(userId, sessionId, { after: mid - 1, limit: 1 })).rows;
    if (row !== undefined && row.ts > ts) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function callsOf(session: SessionSummary, row: SessionRow, before: SessionRow | undefined): ToolCallTimelineItem[] {
  const userMessage = before?.role === 'user' ? before.content : '';
  return row.toolCalls.map((call, index) => ({
    session_id: session.sessionId,
    title: session.title,
    message_id: row.messageId,
    ts: row.ts,
    user_message: userMessage,
    index,
    name: call.name,
    input: call.input,
    output: call.output,
    ...(row.error ? { failed: true as const } : {}),
  }));
}

function passes(item: ToolCallTimelineItem, tool: string, keyword: string): boolean {
  return (tool === '' || item.name === tool) && (keyword === '' || [item.name, item.input, item.output, item.user_message].some((text) => text.toLowerCase().includes(keyword)));
}

/** A binary heap of streams, the first in the timeline's order on top. */
class StreamHeap {
  private readonly items: Stream[] = [];
  get size(): number {
    return this.items.length;
  }
  push(stream: Stream): void {
    const a = this.items;
    a.push(stream);
    for (let i = a.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (compare(a[i]!.key, a[parent]!.key) >= 0) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }
  pop(): Stream | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && compare(a[l]!.key, a[m]!.key) < 0) m = l;
        if (r < a.length && compare(a[r]!.key, a[m]!.key) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}
