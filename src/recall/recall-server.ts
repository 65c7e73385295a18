import { genServer, type Pid, type ServiceSlot } from '../otp/index.ts';
import { createRecall, type Recall, type RecallOptions } from './recall.ts';
import type { SearchPool } from './storage/lmdb/pool/search-pool.ts';

/**
 * The recall service's process: builds the service at init over the runtime's memory, its LMDB
 * environment as it is now (it may have restarted) and the search pool if one is published,
 * and publishes it in the slot (`runtime.recall` forwards to whatever the slot holds). A stop
 * refuses new calls and waits for running ones (`close`). Everything lives in LMDB, so a
 * restart loses nothing. It traps exits (see supervisors/recall.ts).
 */
export function recallServer(
  slot: ServiceSlot<Recall>,
  pool: ServiceSlot<SearchPool> | undefined,
  options: () => RecallOptions,
) {
  return genServer<{ service: Recall; pid: Pid }>({
    init: (_input, self) => {
      const published = pool?.current();
      const service = createRecall({ ...options(), ...(published === undefined ? {} : { pool: published }) });
      slot.publish(service, self.pid);
      return { service, pid: self.pid };
    },
    terminate: async (_reason, { service, pid }) => {
      slot.retract(pid);
      await service.close();
    },
  });
}
