import { genServer, type Pid, type ServiceSlot } from '../otp/index.ts';
import { createRecall, type Recall, type RecallOptions } from './recall.ts';
import type { RecallStore } from './storage/recall-store.ts';

/**
 * The recall service's process: builds its store at init (over the runtime's storage as it is
 * now: an LMDB environment may have restarted), publishes the store in `stores` (the embedding
 * drain shares it) and the service in `slot` (`runtime.recall` forwards to whatever the slot
 * holds). A stop refuses new calls, waits for running ones (`close`), then closes the store.
 * Everything lives in the store, so a restart loses nothing. It traps exits (see
 * supervisors/recall.ts).
 */
export interface RecallServerOptions {
  /** Opens the store (LMDB: over the environment and the search pool published now). */
  openStore(): RecallStore;
  service(): Omit<RecallOptions, 'store'>;
}

export function recallServer(slot: ServiceSlot<Recall>, stores: ServiceSlot<RecallStore>, options: RecallServerOptions) {
  return genServer<{ service: Recall; store: RecallStore; pid: Pid }>({
    init: (_input, self) => {
      const store = options.openStore();
      const service = createRecall({ ...options.service(), store });
      stores.publish(store, self.pid);
      slot.publish(service, self.pid);
      return { service, store, pid: self.pid };
    },
    terminate: async (_reason, { service, store, pid }) => {
      slot.retract(pid);
      stores.retract(pid);
      await service.close();
      await store.close();
    },
  });
}
