import type { Pid } from '../../otp/index.ts';
import { ServiceSlot } from '../../otp/index.ts';
import type { EnvironmentLease } from '../lmdb/lmdb-environment.ts';
import type { MessageTable } from '../contract/message-table.ts';
import type { StorageError } from '../contract/memory-errors.ts';

/**
 * A runtime's storage, as its processes hand it over: the LMDB environment (placed here by
 * the environment holder, and kept across restarts of the store, like an ETS heir) and the
 * table the store actor owns. The table counts as present only while its owner is alive, so
 * a crashed store's table (an in-memory one is lost with it) is never read.
 */
export class StorageSlot {
  lease: EnvironmentLease | undefined;
  private readonly table = new ServiceSlot<MessageTable>();

  current(): MessageTable | undefined {
    return this.table.current();
  }

  /** The live table, waiting while the store restarts; rejects `store_closed` once closed. */
  whenTable(): Promise<MessageTable> {
    return this.table.get();
  }

  publish(table: MessageTable, owner: Pid): void {
    this.table.publish(table, owner);
  }

  retract(owner: Pid): void {
    this.table.retract(owner);
  }

  close(error: StorageError): void {
    this.table.close(error);
  }

  /** Release the LMDB environment (idempotent): flush, yield a turn, close. */
  async releaseEnvironment(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    await lease?.release();
  }
}
