/**
 * In-process locks by key, for the LMDB adapter (one process owns the directory): a session's
 * turns, a user's summary appends against their erasure. FIFO: holders run in the order they asked.
 */
/** One holder per key at a time, in the order they asked; the rest wait. */
export class KeyedLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async lock(key: string): Promise<() => Promise<void>> {
    const before = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = (before ?? Promise.resolve()).then(() => mine);
    this.tails.set(key, tail);
    await before;
    return async () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
