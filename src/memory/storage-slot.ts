import type { Pid } from '../otp/index.ts';
import { isAlive } from '../otp/index.ts';
import type { EnvironmentLease } from './lmdb-environment.ts';
import type { MessageTable } from './message-table.ts';
import { StorageError } from './storage-error.ts';

/**
 * A runtime's storage, as its processes hand it over: the LMDB environment (placed here by
 * the environment holder, and kept across restarts of the store, like an ETS heir) and the
 * table the store actor owns. The table counts as present only while its owner is alive, so
 * a crashed store's table (an in-memory one is lost with it) is never read.
 */
export class StorageSlot {
  lease: EnvironmentLease | undefined;
  private table: MessageTable | undefined;
  private owner: Pid | undefined;
  private waiters: Array<{ resolve(t: MessageTable): void; reject(e: unknown): void }> = [];
  private closedWith: StorageError | undefined;

  current(): MessageTable | undefined {
    return this.table !== undefined && this.owner !== undefined && isAlive(this.owner) ? this.table : undefined;
  }

  /** The live table, waiting while the store restarts; rejects `store_closed` once closed. */
  whenTable(): Promise<MessageTable> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const table = this.current();
    if (table !== undefined) return Promise.resolve(table);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  publish(table: MessageTable, owner: Pid): void {
    this.table = table;
    this.owner = owner;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(table);
  }

  retract(owner: Pid): void {
    if (this.owner !== owner) return;
    this.table = undefined;
    this.owner = undefined;
  }

  close(error: StorageError): void {
    this.closedWith ??= error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  /** Release the LMDB environment (idempotent): flush, yield a turn, close. */
  async releaseEnvironment(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    await lease?.release();
  }
}
