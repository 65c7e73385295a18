import { genServer, type Pid, type ServiceSlot } from '../../otp/index.ts';
import { createEmbeddingDrain, type EmbeddingDrain, type EmbeddingDrainOptions } from './embed-drain.ts';

/**
 * The embedding drain's process (supervisors/recall.ts): builds the drain at init over the
 * runtime's recall store as it is now, publishes it in the slot (the recall service kicks
 * it and reads its counters through the slot), and closes it on a stop. An unexpected failure
 * of the drain (storage) stops the process with that crash, so its supervisor restarts it; the
 * queue lives in the store, so a restart, or a SIGKILL of the whole process, loses nothing. It
 * traps exits, so the supervisor's shutdown reaches `terminate`.
 */
export function embedDrainServer(slot: ServiceSlot<EmbeddingDrain>, options: () => Omit<EmbeddingDrainOptions, 'onCrash'>) {
  return genServer<{ drain: EmbeddingDrain; pid: Pid }>({
    init: (_input, self) => {
      const drain = createEmbeddingDrain({ ...options(), onCrash: (error) => self.stop({ crashed: error }) });
      slot.publish(drain, self.pid);
      return { drain, pid: self.pid };
    },
    terminate: async (_reason, { drain, pid }) => {
      slot.retract(pid);
      await drain.close();
    },
  });
}
