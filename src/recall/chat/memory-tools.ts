import type { JsonObject, JsonValue } from '../../message.ts';
import { defineTool, type Tool } from '../../kernel/tool.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import type { DailyRow, SessionRow } from '../rows/row-types.ts';
import { formatDailyRow, formatRows } from './row-format.ts';
import { DEFAULT_LANGUAGE, type Language } from '../../language.ts';
import { TOOL_TEXTS } from './tool-texts.ts';

/**
 * The demo's six memory tools (reference §5.3), then the facts tools `remember`,
 * `update_memory`, `forget` (long-term facts, src/recall/facts/). The six keep the demo's
 * names, arguments, defaults, descriptions,
 * output format (`#{message_id} {ts} | {role}: {content}` per row, joined with `\n`) and
 * empty-result strings. They are bound to one (user, session) per turn, so the model can name
 * neither another user nor another session. Cross-day `search_daily` hits also carry their day
 * (`#45 [2026-04-08] ...`), since daily anchors restart each day.
 *
 * The six keep the Demo's (English) texts in every language; the facts tools speak the
 * server's language (tool-texts.ts), and so do the lines their backend answers.
 *
 * Arguments are read leniently, as the demo's model-facing signatures coerced them: an integer
 * may come as a number or a numeric string; anything unreadable takes the default.
 */
export interface MemoryToolBackend {
  /** `remember_note`: replaces the long-term document with `note`. */
  rememberNote(note: string): Promise<void>;
  /** The facts tools: each answers the line the model reads back. */
  remember(text: string, key: string | undefined): Promise<string>;
  /** `update_memory`: changes the fact `target` names to `text`. */
  updateMemory(target: FactTarget, text: string): Promise<string>;
  /** `forget`: ends the fact `target` names. */
  forget(target: FactTarget): Promise<string>;
  /** `get_recent_session`: the session's last `rounds` rounds. */
  recentSession(rounds: number): Promise<SessionRow[]>;
  /** `search_session`: the session's rows containing `keyword`, at most `limit`. */
  searchSession(keyword: string, limit: number): Promise<SessionRow[]>;
  /** `get_session_window`: the rows around a session message id. */
  sessionWindow(messageId: JsonValue | undefined, before: number, after: number): Promise<SessionRow[]>;
  /**
   * `search_daily`: the user's daily rows containing `keyword` (on `day` when it is a date, else on every day),
   * at most `limit`.
   */
  searchDaily(keyword: string, day: string, limit: number): Promise<DailyRow[]>;
  /** `get_daily_window`: the rows around a daily message id of `day` (empty: today). */
  dailyWindow(messageId: JsonValue | undefined, before: number, after: number, day: string): Promise<DailyRow[]>;
}

/** How the model names a fact: its id (from `remember`), its key, or its text as shown. */
export interface FactTarget {
  /** The fact's id (`m1`, `m2`, ...). */
  id?: string;
  /** The key it was remembered under. */
  key?: string;
  /** Its text, as shown to the model. */
  memory?: string;
}

/** The facts tools, after the six: one fact at a time, never the whole document. */
export const FACT_TOOL_NAMES = ['remember', 'update_memory', 'forget'] as const;

export const MEMORY_TOOL_NAMES = [
  'remember_note',
  'get_recent_session',
  'search_session',
  'get_session_window',
  'search_daily',
  'get_daily_window',
] as const;

const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;

/**
 * The nine memory tools over `backend` (the Demo's six, then the facts tools), with the facts
 * tools' texts in `language` (default `'zh'`).
 */
export function createMemoryTools(backend: MemoryToolBackend, language: Language = DEFAULT_LANGUAGE): Tool[] {
  const texts = TOOL_TEXTS[language];
  return [
    defineTool({
      name: 'remember_note',
      description: 'Overwrite memory.md with the latest full-memory text. The input must be complete, not incremental.',
      parameters: object({ note: str, tags: { ...str, default: 'preference,fact' } }, ['note']),
      async execute(args: JsonObject) {
        await backend.rememberNote(text(args['note'], ''));
        return 'stored';
      },
    }),
    defineTool({
      name: 'get_recent_session',
      description: 'Fetch the latest session history by rounds (1 round ~= user+assistant messages).',
      parameters: object({ rounds: { ...int, default: 3 } }, []),
      async execute(args: JsonObject) {
        const rows = await backend.recentSession(integer(args['rounds'], 3));
        return rows.length > 0 ? formatRows(rows) : 'no session history';
      },
    }),
    defineTool({
      name: 'search_session',
      description: 'Search session history by keyword and return message_id anchors for follow-up window lookups.',
      parameters: object({ keyword: str, limit: { ...int, default: 20 } }, ['keyword']),
      async execute(args: JsonObject) {
        const limit = clamp(integer(args['limit'], 20), 1, 100);
        const rows = await backend.searchSession(text(args['keyword'], ''), limit);
        return rows.length > 0 ? formatRows(rows) : 'no matched session messages';
      },
    }),
    defineTool({
      name: 'get_session_window',
      description: 'Fetch session messages around a message_id anchor. Use after search_session to expand context.',
      parameters: object({ message_id: int, before: { ...int, default: 0 }, after: { ...int, default: 0 } }, ['message_id']),
      async execute(args: JsonObject) {
        const rows = await backend.sessionWindow(args['message_id'], integer(args['before'], 0), integer(args['after'], 0));
        return rows.length > 0 ? formatRows(rows) : 'no window messages';
      },
    }),
    defineTool({
      name: 'search_daily',
      description: 'Search daily history by keyword. Optional day=YYYY-MM-DD; empty/invalid day falls back to all days.',
      parameters: object({ keyword: str, day: { ...str, default: '' }, limit: { ...int, default: 50 } }, ['keyword']),
      async execute(args: JsonObject) {
        const day = text(args['day'], '');
        const limit = clamp(integer(args['limit'], 50), 1, 200);
        const rows = await backend.searchDaily(text(args['keyword'], ''), day, limit);
        if (rows.length === 0) return 'no matched daily messages';
        return isCalendarDay(day.trim()) ? formatRows(rows) : rows.map(formatDailyRow).join('\n');
      },
    }),
    defineTool({
      name: 'get_daily_window',
      description: 'Fetch daily messages around a message_id anchor. Use after search_daily to expand context.',
      parameters: object(
        { message_id: int, before: { ...int, default: 0 }, after: { ...int, default: 0 }, day: { ...str, default: '' } },
        ['message_id'],
      ),
      async execute(args: JsonObject) {
        const rows = await backend.dailyWindow(
          args['message_id'],
          integer(args['before'], 0),
          integer(args['after'], 0),
          text(args['day'], ''),
        );
        return rows.length > 0 ? formatRows(rows) : 'no window messages';
      },
    }),
    defineTool({
      name: 'remember',
      description: texts.remember,
      parameters: object({ text: str, key: str }, ['text']),
      async execute(args: JsonObject) {
        const t = text(args['text'], '').trim();
        if (t === '') return texts.nothingToRemember;
        const key = text(args['key'], '').trim();
        return backend.remember(t, key === '' ? undefined : key);
      },
    }),
    defineTool({
      name: 'update_memory',
      description: texts.updateMemory,
      parameters: object({ id: str, key: str, memory: str, text: str }, ['text']),
      async execute(args: JsonObject) {
        const t = text(args['text'], '').trim();
        if (t === '') return texts.nothingToUpdate;
        return backend.updateMemory(target(args), t);
      },
    }),
    defineTool({
      name: 'forget',
      description: texts.forget,
      parameters: object({ id: str, key: str, memory: str }, []),
      async execute(args: JsonObject) {
        return backend.forget(target(args));
      },
    }),
  ];
}

function target(args: JsonObject): FactTarget {
  const pick = (name: string) => {
    const v = text(args[name], '').trim();
    return v === '' ? {} : { [name]: v };
  };
  return { ...pick('id'), ...pick('key'), ...pick('memory') };
}

function object(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return { type: 'object', properties, required };
}

function text(v: JsonValue | undefined, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

function integer(v: JsonValue | undefined, fallback: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(n, hi));
}
