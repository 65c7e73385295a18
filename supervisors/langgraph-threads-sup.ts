/**
 * langgraph_threads: the dynamic (simple_one_for_one) supervisor of a LangGraph saver's thread
 * writers (src/langgraph/thread-writer.ts), one per thread, started on first use by the router
 * (src/langgraph/thread-writer-router.ts).
 *
 * - `temporary`: a writer that crashed is not restarted; the next write of its thread starts a
 *   fresh one, which reads what it needs from the storage.
 * - shutdown 5000 ms: a stopping writer first finishes the requests it was handed.
 * - Intensity 10 restarts in 10 s, like conversation_sup.
 * - Under a runtime it is a child of the root (`permanent`, shutdown `infinity`, added after the
 *   memory, so it stops before the storage closes); standalone, the saver starts and stops it.
 */
import type { ChildSpec, Pid, StartResult } from '../src/otp/index.ts';
import { startDynamicSupervisor } from '../src/otp/index.ts';

/** Starts one thread's writer (the saver's own, as it holds the saver's dependencies). */
export type StartWriter = (threadId: string) => StartResult | Promise<StartResult>;

export function startThreadWritersSup(name: string, startWriter: StartWriter): Promise<Pid> {
  return startDynamicSupervisor<[string]>(
    {
      child: {
        start: startWriter,
        restart: 'temporary',
        shutdown: 5000,
      },
      intensity: 10,
      period: 10,
    },
    { name },
  );
}

/** The supervisor as a child of a runtime's root. */
export function threadWritersSupChild(id: string, name: string, startWriter: StartWriter): ChildSpec {
  return { id, type: 'supervisor', restart: 'permanent', shutdown: 'infinity', start: () => startThreadWritersSup(name, startWriter) };
}
