import { HIGH, type LongTermValue, type RecallDbs } from './recall-dbs.ts';
import { onLongTermUndo, onLongTermWrite } from './search/index-hooks.ts';

/**
 * Long-term memory: one document per user (the demo's `memory.md`), replaced whole by every
 * write. Each write is a new version, so a bad overwrite (the model drops facts) can be undone.
 * - A blank document is a no-op (the demo's `remember_long_term` rule), so is a document equal
 *   to the current one: neither makes a version.
 * - `undo` drops the newest version; the one before becomes current (none left: `''`).
 * - Content is stored trimmed, as the demo read it back; an imported file also keeps its raw
 *   text so an export writes it back byte for byte.
 */
export interface LongTermVersion {
  version: number;
  content: string;
  ts: string;
  source: LongTermValue['source'];
}

function newest(dbs: RecallDbs, userId: string): { version: number; value: LongTermValue } | undefined {
  for (const { key, value } of dbs.longTerm.getRange({ start: [userId, HIGH], end: [userId], reverse: true, limit: 1 })) {
    return { version: key[1], value };
  }
  return undefined;
}

export function currentLongTerm(dbs: RecallDbs, userId: string): string {
  return newest(dbs, userId)?.value.content ?? '';
}

export function currentLongTermValue(dbs: RecallDbs, userId: string): LongTermValue | undefined {
  return newest(dbs, userId)?.value;
}

/**
 * Inside a write transaction. Returns the new version, or `null` for a no-op. `force`: write
 * even a document equal to the newest version (facts changed since it, so it is not current).
 */
export function writeLongTerm(
  dbs: RecallDbs,
  userId: string,
  document: string,
  source: LongTermValue['source'],
  ts: string,
  raw?: string,
  force = false,
): LongTermVersion | null {
  const content = document.trim();
  const top = newest(dbs, userId);
  if (source !== 'import' && !force && (content === '' || content === top?.value.content)) return null;
  const version = (top?.version ?? 0) + 1;
  const value: LongTermValue = raw === undefined ? { content, ts, source } : { content, ts, source, raw };
  onLongTermWrite(dbs, userId, top?.value.content ?? '', content);
  dbs.longTerm.put([userId, version], value);
  return { version, content, ts, source };
}

/** Inside a write transaction. Returns the document now current, or `null` when nothing was undone. */
export function undoLongTerm(dbs: RecallDbs, userId: string): string | null {
  const top = newest(dbs, userId);
  if (!top) return null;
  dbs.longTerm.remove([userId, top.version]);
  const now = newest(dbs, userId)?.value.content ?? '';
  onLongTermUndo(dbs, userId, top.value.content, now);
  return now;
}

export function longTermHistory(dbs: RecallDbs, userId: string): LongTermVersion[] {
  const versions: LongTermVersion[] = [];
  for (const { key, value } of dbs.longTerm.getRange({ start: [userId], end: [userId, HIGH] })) {
    versions.push({ version: key[1], content: value.content, ts: value.ts, source: value.source });
  }
  return versions;
}
