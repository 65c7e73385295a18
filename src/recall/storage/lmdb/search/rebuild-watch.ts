/**
 * The documents indexed by live writes while a rebuild of their user runs in this process
 * (rebuild.ts): the rebuild skips them instead of probing the posting lists for every row it
 * reads (a probe decodes a chunk: most of a rebuild's time before). A rebuild's own rows were
 * never indexed (it starts by dropping the user's index), so a row it reads is either in this
 * set or not indexed. Writes come from this process only (the environment's owner).
 *
 * Removals are counted too (a daily row removed, the user erased): while none came, every row
 * a rebuild read still exists, and it checks none (a `doesExist` a row was ~10% of a rebuild).
 *
 * And every write to the user's index but the rebuild's own (a document added or removed, the
 * pending log merged: search-index.ts): while none came, the posting lists hold exactly what
 * the rebuild wrote, so it may keep the terms' tails in memory (rebuild.ts).
 */
const watched = new Map<string, Set<number>>();
const removals = new Map<string, number>();
const indexWrites = new Map<string, number>();

export function watchLiveWrites(userId: string): Set<number> {
  const set = new Set<number>();
  watched.set(userId, set);
  removals.set(userId, 0);
  indexWrites.set(userId, 0);
  return set;
}

export function unwatchLiveWrites(userId: string): void {
  watched.delete(userId);
  removals.delete(userId);
  indexWrites.delete(userId);
}

/** Called inside the transaction that removes a daily row of the user, or erases them. */
export function noteLiveRemoval(userId: string): void {
  const n = removals.get(userId);
  if (n !== undefined) removals.set(userId, n + 1);
}

/** Removals of the user's rows since their rebuild began (0 when none runs). */
export function liveRemovals(userId: string): number {
  return removals.get(userId) ?? 0;
}

/** Called by the index hooks for every document a live write indexed. */
export function noteLiveWrite(userId: string, doc: number): void {
  watched.get(userId)?.add(doc);
}

/** Called by every write to a user's index but a rebuild's own (search-index.ts). */
export function noteIndexWrite(userId: string): void {
  const n = indexWrites.get(userId);
  if (n !== undefined) indexWrites.set(userId, n + 1);
}

/** Writes to the user's index by others since their rebuild began (0 when none runs). */
export function othersIndexWrites(userId: string): number {
  return indexWrites.get(userId) ?? 0;
}
