import { exit, genServer, type Pid } from '../../otp/index.ts';
import type { MessageLog } from '../contract/message-log.ts';
import { createCustomTable } from './custom-table.ts';
import { InjectedFault, type FaultInjector } from './fault-injector.ts';
import { createInMemoryTable } from '../in-memory/in-memory-table.ts';
import { createLmdbTable } from '../lmdb/lmdb-table.ts';
import type { MessageTable } from '../contract/message-table.ts';
import type { StorageSlot } from './storage-slot.ts';

/**
 * The store actor: a permanent singleton registered under a fixed name, the owner of the
 * runtime's message table (beamai's ETS owner). It builds the table at init and publishes it
 * in the storage slot; conversation actors write through it and readers read it directly
 * (LMDB reads are synchronous and safe from anywhere, like a `protected` ETS table).
 *
 * After a crash the supervisor starts a new store: over LMDB (or a custom backend) the new
 * table sees everything that was committed; in memory it starts empty, exactly as beamai's
 * ETS store does.
 */
export type StorageKind = { kind: 'lmdb' } | { kind: 'memory' } | { kind: 'custom'; store: MessageLog };

export function storeActor(slot: StorageSlot, storage: StorageKind, faults: FaultInjector | undefined) {
  return genServer<{ table: MessageTable; pid: Pid }>({
    init: (_input, self) => {
      let table: MessageTable;
      if (storage.kind === 'memory') table = createInMemoryTable();
      else if (storage.kind === 'custom') table = createCustomTable(storage.store);
      else {
        if (slot.lease === undefined) throw new Error('the LMDB environment is not open (no environment holder ran)');
        table = createLmdbTable(slot.lease);
      }
      if (faults !== undefined) table = withStoreFaults(table, faults, self.pid);
      slot.publish(table, self.pid);
      return { table, pid: self.pid };
    },
    handleCall: (_request, _from, state) => state.table.kind,
    // Runs on a crash (and on stop()); the store does not trap exits, so a supervisor shutdown skips it,
    // which is safe: the slot reads a table only while its owner is alive. By pid, so a successor that
    // already published is left alone.
    terminate: (_reason, state) => slot.retract(state.pid),
  });
}

/** Each write or clear may crash the store (fault injection; see fault-injector.ts). */
function withStoreFaults(table: MessageTable, faults: FaultInjector, owner: Pid): MessageTable {
  const check = (what: string) => {
    if (!faults.takeStoreFault()) return;
    const fault = new InjectedFault(`store operation ${what}`);
    exit(owner, { crashed: fault });
    throw fault;
  };
  return {
    ...table,
    write: (c, records, to, keys, sharedCommit) => {
      check('write');
      table.write(c, records, to, keys, sharedCommit);
    },
    clear: (c) => {
      check('clear');
      return table.clear(c);
    },
  };
}
