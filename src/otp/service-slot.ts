import type { Pid } from './pid.ts';
import { isAlive } from './process.ts';

/**
 * A value owned by a supervised process and published for callers outside the tree (a pool,
 * a service object). Callers read it through the slot, never by holding the value, so after a
 * restart they get the new incarnation's value; while the owner restarts, `get()` waits for
 * it. Once the slot is closed, `get()` rejects with the closing error.
 */
export class ServiceSlot<T> {
  private value: T | undefined;
  private owner: Pid | undefined;
  private waiters: Array<{ resolve(value: T): void; reject(error: unknown): void }> = [];
  private closedWith: Error | undefined;

  /** The live value, or undefined while its owner is down. */
  current(): T | undefined {
    return this.owner !== undefined && isAlive(this.owner) ? this.value : undefined;
  }

  /** The live value; waits while its owner restarts. Rejects with the closing error once closed. */
  get(): Promise<T> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const value = this.current();
    if (value !== undefined) return Promise.resolve(value);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Publishes `value`, owned by `owner` (it is current while `owner` lives), and hands it to every
   * waiting `get`.
   */
  publish(value: T, owner: Pid): void {
    this.value = value;
    this.owner = owner;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(value);
  }

  /** The owner is going away; only its own publication is withdrawn. */
  retract(owner: Pid): void {
    if (this.owner !== owner) return;
    this.value = undefined;
    this.owner = undefined;
  }

  /** Closes the slot: every waiting and later `get` rejects with `error` (the first close's). */
  close(error: Error): void {
    this.closedWith ??= error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}
