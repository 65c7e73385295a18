import { UserErasingError } from './recall-errors.ts';

/**
 * Who may run while a user is erased. Every recall call that names a user runs under
 * `forUser(user)`; calls over many users at once (a folder import or export) under `forAll()`.
 * `exclusive(user, work)` (the erasure):
 *
 * - from the moment it is called, new calls naming that user, and new `forAll` calls, are
 *   refused with `UserErasingError` (`user_erasing`): they store nothing;
 * - it waits for the running calls of that user and the running `forAll` calls to finish
 *   (a turn in flight completes, and its rows are then erased with the rest);
 * - then runs `work`, and lets calls in again once `work` settles.
 *
 * Calls naming other users are never held up. Two erasures of one user at once: the second
 * is refused with `user_erasing`.
 */
export class UserGate {
  private readonly running = new Map<string, Set<Promise<unknown>>>();
  private readonly erasing = new Set<string>();
  /** Key of the `forAll` calls: no user id is empty, so it never meets one. */
  private static readonly ALL = '';

  forUser<T>(userId: string, work: () => Promise<T>): Promise<T> {
    if (this.erasing.has(userId)) return Promise.reject(new UserErasingError(userId));
    return this.enter(userId, work);
  }

  forAll<T>(work: () => Promise<T>): Promise<T> {
    const first = this.erasing.values().next();
    if (!first.done) return Promise.reject(new UserErasingError(first.value));
    return this.enter(UserGate.ALL, work);
  }

  async exclusive<T>(userId: string, work: () => Promise<T>): Promise<T> {
    if (this.erasing.has(userId)) throw new UserErasingError(userId);
    this.erasing.add(userId);
    try {
      for (const key of [userId, UserGate.ALL]) {
        for (let calls = this.running.get(key); calls !== undefined && calls.size > 0; calls = this.running.get(key)) {
          await Promise.all(calls);
        }
      }
      return await work();
    } finally {
      this.erasing.delete(userId);
    }
  }

  private enter<T>(key: string, work: () => Promise<T>): Promise<T> {
    const p = Promise.resolve().then(work);
    const settled = p.then(noop, noop);
    let calls = this.running.get(key);
    if (calls === undefined) this.running.set(key, (calls = new Set()));
    const set = calls;
    set.add(settled);
    void settled.then(() => {
      set.delete(settled);
      if (set.size === 0 && this.running.get(key) === set) this.running.delete(key);
    });
    return p;
  }
}

const noop = () => undefined;
