/**
 * Document numbers of the ranked index, the same on every storage engine: a document's number
 * IS its row's key, so no map from documents to rows is kept. A daily row `[day, id]` is
 * `(days since 1900-01-01 + 1) × 2^22 + id`; a long-term line `n` is `n` (below 2^22). Daily
 * ids from 2^22 up (four million rows in one day) are not indexed.
 */
export const DAY_SLOT = 2 ** 22;
const DAY_MS = 86_400_000;
const EPOCH = Date.UTC(1900, 0, 1);

/** Sorts after every document number. */
export const MAX_DOC = 2 ** 53;

export type DocRef = { kind: 'daily'; day: string; id: number } | { kind: 'long_term'; line: number };

/** The document number of daily row `[day, id]`; `null` when it cannot have one. */
export function dailyDoc(day: string, id: number): number | null {
  const t = Date.parse(`${day}T00:00:00Z`);
  if (!Number.isFinite(t) || t < EPOCH || !Number.isInteger(id) || id < 1 || id >= DAY_SLOT) return null;
  return (Math.round((t - EPOCH) / DAY_MS) + 1) * DAY_SLOT + id;
}

export function longTermDoc(line: number): number | null {
  return line >= 1 && line < DAY_SLOT ? line : null;
}

export function docRef(doc: number): DocRef {
  const slot = Math.floor(doc / DAY_SLOT);
  if (slot === 0) return { kind: 'long_term', line: doc };
  const day = new Date(EPOCH + (slot - 1) * DAY_MS).toISOString().slice(0, 10);
  return { kind: 'daily', day, id: doc - slot * DAY_SLOT };
}
