import { genServer, type Pid, type ServiceSlot } from '../../../../otp/index.ts';
import { createSearchPool, type SearchPool, type SearchPoolOptions } from './search-pool.ts';

/**
 * The search pool's process: owns the piscina pool (built at init, published in the slot for
 * the recall service) and closes it on a stop, after its running scans finished. It holds no
 * state of its own, so a restart loses nothing. It traps exits (see supervisors/recall.ts),
 * so the supervisor's shutdown reaches `terminate`.
 */
export function searchPoolServer(slot: ServiceSlot<SearchPool>, options: SearchPoolOptions) {
  return genServer<{ pool: SearchPool; pid: Pid }>({
    init: (_input, self) => {
      const pool = createSearchPool(options);
      slot.publish(pool, self.pid);
      return { pool, pid: self.pid };
    },
    terminate: async (_reason, { pool, pid }) => {
      slot.retract(pid);
      await pool.close();
    },
  });
}
