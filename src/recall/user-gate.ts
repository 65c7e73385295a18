import { UserErasingError } from './recall-errors.ts';

/**
 * Who may run while a user is erased. Every recall call that names a user runs under
 * `forUser(user)`; calls over many users at once (a folder import or export) under `forAll()`;
 * background jobs of one user (fact extraction) hold a `lease(user)`. `exclusive(user, work)`
 * (the erasure):
 *
 * - from the moment it is called, new calls naming that user, new `forAll` calls and new
 *   leases of that user are refused with `UserErasingError` (`user_erasing`): they store nothing;
 * - at that same moment it revokes the user's leases: each one's `signal` aborts and `held`
 *   turns false for good. A job checks `held` INSIDE each of its write transactions (the same
 *   synchronous LMDB transaction body as its writes) and writes nothing once it is false. LMDB
 *   write transactions run one at a time, so a job's write either ran before the claim (then
 *   before the erasure's transaction, which removes it with the rest) or sees `held` false: no
 *   write of a job the erasure outlived survives it. The erasure does not wait for a job (its
 *   model call may take minutes);
 * - it waits for the running calls of that user and the running `forAll` calls to finish
 *   (a turn in flight completes, and its rows are then erased with the rest);
 * - then runs `work`, and lets calls in again once `work` settles.
 *
 * Calls and jobs of other users are never held up. Two erasures of one user at once: the
 * second is refused with `user_erasing`.
 */
export interface UserLease {
  /** Aborted when an erasure of the user begins. */
  readonly signal: AbortSignal;
  /** True until an erasure of the user begins; read it inside the write transaction. */
  readonly held: boolean;
  /** The job is over (the gate forgets the lease); idempotent. */
  release(): void;
}

export class UserGate {
  private readonly running = new Map<string, Set<Promise<unknown>>>();
  private readonly erasing = new Set<string>();
  private readonly leases = new Map<string, Set<Lease>>();
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

  /** Whether an erasure of the user is running (a background job skips the user's work then). */
  isErasing(userId: string): boolean {
    return this.erasing.has(userId);
  }

  /** A background job's hold on the user; throws `UserErasingError` while the user is erased. */
  lease(userId: string): UserLease {
    if (this.erasing.has(userId)) throw new UserErasingError(userId);
    let set = this.leases.get(userId);
    if (set === undefined) this.leases.set(userId, (set = new Set()));
    const owner = set;
    const lease = new Lease(userId, () => {
      owner.delete(lease);
      if (owner.size === 0 && this.leases.get(userId) === owner) this.leases.delete(userId);
    });
    owner.add(lease);
    return lease;
  }

  async exclusive<T>(userId: string, work: () => Promise<T>): Promise<T> {
    if (this.erasing.has(userId)) throw new UserErasingError(userId);
    this.erasing.add(userId);
    for (const lease of this.leases.get(userId) ?? []) lease.revoke();
    this.leases.delete(userId);
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

class Lease implements UserLease {
  private readonly abort = new AbortController();
  private revoked = false;
  constructor(
    private readonly userId: string,
    private readonly forget: () => void,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get held(): boolean {
    return !this.revoked;
  }

  revoke(): void {
    this.revoked = true;
    this.abort.abort(new UserErasingError(this.userId));
  }

  release(): void {
    this.forget();
  }
}

const noop = () => undefined;
