/** Yield to the event loop (lets lmdb-js end its batch, timers fire, GC breathe). */
export const nextTurn = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** Runs a full GC twice when the process was started with --expose-gc (child processes are). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
}
