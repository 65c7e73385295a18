/**
 * langgraph_threads: the dynamic (simple_one_for_one) supervisor of a LangGraph saver's thread
 * writers (src/langgraph/thread-writer.ts), one per thread, started on first use by the router
 * (src/langgraph/thread-writer-router.ts).
 *
 * - `temporary`: a writer that crashed is not restarted; the next write of its thread starts a
 *   fresh one, which reads what it needs from LMDB.
 * - shutdown 5000 ms: a stopping writer first finishes the requests it was handed.
 * - Intensity 10 restarts in 10 s, like conversation_sup.
 * - Under a runtime it is a child of the root (`permanent`, shutdown `infinity`, added after the
 *   memory, so it stops before LMDB closes); standalone, the saver starts and stops it.
 */
import type { ChildSpec, Pid } from '../src/otp/index.ts';
import { spawn, startDynamicSupervisor } from '../src/otp/index.ts';
import { threadWriter, type WriterDeps } from '../src/langgraph/thread-writer.ts';

export function startThreadWritersSup(name: string, deps: WriterDeps): Promise<Pid> {
  return startDynamicSupervisor<[string]>(
    {
      child: {
        start: (threadId: string) => spawn(threadWriter(), { input: { threadId, deps }, trapExit: true }),
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
export function threadWritersSupChild(id: string, name: string, deps: WriterDeps): ChildSpec {
  return { id, type: 'supervisor', restart: 'permanent', shutdown: 'infinity', start: () => startThreadWritersSup(name, deps) };
}
