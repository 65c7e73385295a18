/**
 * The documents indexed by live writes while a rebuild of their user runs in this process
 * (rebuild.ts): the rebuild skips them instead of probing the posting lists for every row it
 * reads (a probe decodes a chunk: most of a rebuild's time before). A rebuild's own rows were
 * never indexed (it starts by dropping the user's index), so a row it reads is either in this
 * set or not indexed. Writes come from this process only (the environment's owner).
 */
const watched = new Map<string, Set<number>>();

export function watchLiveWrites(userId: string): Set<number> {
  const set = new Set<number>();
  watched.set(userId, set);
  return set;
}

export function unwatchLiveWrites(userId: string): void {
  watched.delete(userId);
}

/** Called by the index hooks for every document a live write indexed. */
export function noteLiveWrite(userId: string, doc: number): void {
  watched.get(userId)?.add(doc);
}
