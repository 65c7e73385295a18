/**
 * Document numbers of the ranked index, the same on every storage engine: a document's number
 * IS its row's key, so no map from documents to rows is kept. A daily row `[day, id]` is
 * `(days since 1900-01-01 + 1) × 2^22 + id`; a long-term line `n` is `n` (below 2^22). Daily
 * ids from 2^22 up (four million rows in one day) are not indexed. A session document (a
 * session row no daily row holds: an imported session without its daily files) is
 * `(SESSION_SLOT + order) × 2^22 + id`, `order` its session's creation order (below 2^25) and
 * `id` the row's anchor; `SESSION_SLOT` (2^25) is past every calendar day's slot (year 9999 is
 * ~2^21.5), and every number stays below 2^48.
 */
export const DAY_SLOT = 2 ** 22;
const DAY_MS = 86_400_000;
const EPOCH = Date.UTC(1900, 0, 1);

/** Sorts after every document number. */
export const MAX_DOC = 2 ** 53;

/** The first slot of session documents; and how many orders they number. */
export const SESSION_SLOT = 2 ** 25;
const SESSION_ORDERS = 2 ** 25;

export type DocRef =
  | { kind: 'daily'; day: string; id: number }
  | { kind: 'long_term'; line: number }
  | { kind: 'session'; order: number; id: number };

/** The document number of daily row `[day, id]`; `null` when it cannot have one. */
export function dailyDoc(day: string, id: number): number | null {
  const slot = daySlot(day);
  if (slot === null || !Number.isInteger(id) || id < 1 || id >= DAY_SLOT) return null;
  return slot * DAY_SLOT + id;
}

// The last day's slot: rows come in key order (a rebuild's hundreds of thousands), one day after another.
let lastDay = '';
let lastSlot: number | null = null;

function daySlot(day: string): number | null {
  if (day === lastDay) return lastSlot;
  const t = Date.parse(`${day}T00:00:00Z`);
  const slot = !Number.isFinite(t) || t < EPOCH ? null : Math.round((t - EPOCH) / DAY_MS) + 1;
  lastDay = day;
  lastSlot = slot !== null && slot < SESSION_SLOT ? slot : null;
  return lastSlot;
}

/** The document number of row `id` of the session created `order`-th; `null` when it cannot have one. */
export function sessionDoc(order: number, id: number): number | null {
  if (!Number.isInteger(order) || order < 0 || order >= SESSION_ORDERS || !Number.isInteger(id) || id < 1 || id >= DAY_SLOT) return null;
  return (SESSION_SLOT + order) * DAY_SLOT + id;
}

export function longTermDoc(line: number): number | null {
  return line >= 1 && line < DAY_SLOT ? line : null;
}

export function docRef(doc: number): DocRef {
  const slot = Math.floor(doc / DAY_SLOT);
  if (slot === 0) return { kind: 'long_term', line: doc };
  if (slot >= SESSION_SLOT) return { kind: 'session', order: slot - SESSION_SLOT, id: doc - slot * DAY_SLOT };
  const day = new Date(EPOCH + (slot - 1) * DAY_MS).toISOString().slice(0, 10);
  return { kind: 'daily', day, id: doc - slot * DAY_SLOT };
}
