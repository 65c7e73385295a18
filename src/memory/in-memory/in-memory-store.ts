import { createInMemoryTable } from './in-memory-table.ts';
import { createSerialLog, type ClosableLog } from '../standalone-log.ts';
import type { WallClock } from '../../wall-clock.ts';
import type { ConditionalClear } from '../contract/conditional-clear.ts';

/** What `createInMemoryStore` takes. */
export interface InMemoryStoreOptions {
  /** Where `ts` comes from. Default: the system clock. */
  clock?: WallClock;
}

/**
 * A standalone in-memory store (beamai's ETS backend): a full `MessageLog`, fast, gone when the
 * process ends. For tests and for conversations that need no durability. Inside a runtime use
 * `startRuntime({ storage: 'memory' })` instead, where the store actor owns the data.
 */
export function createInMemoryStore(options: InMemoryStoreOptions = {}): ClosableLog & ConditionalClear {
  return createSerialLog(createInMemoryTable(), options.clock ? { clock: options.clock } : {});
}
