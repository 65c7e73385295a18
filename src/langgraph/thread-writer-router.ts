/**
 * The thread writers' router: hands each write to its thread's writer (thread-writer.ts),
 * starting one on first use under the saver's own dynamic supervisor
 * (supervisors/langgraph-threads-sup.ts).
 *
 * - Under a runtime, that supervisor is added to the runtime's root (`startChild`), after the
 *   memory: the runtime stops it (its writers finish what they were handed) before it closes
 *   the storage. Standalone, the saver starts it and stops it on `close()`.
 * - Order: requests of one thread reach its writer in the order they were made (they wait on
 *   the same start, in order). A writer that passivated removed itself from the route before
 *   stopping; a request that still reached it (it was on its way) gets `normal`/`noproc`
 *   without having been handled, and is routed again.
 * - After `close()` (or once the runtime stopped), requests reject with `store_closed`.
 */
import {
  ExitError,
  call,
  deleteChild,
  isAlive,
  spawn,
  startChild,
  stop,
  terminateChild,
  whereis,
  type Pid,
} from '../otp/index.ts';
import { StorageError } from '../memory/contract/memory-errors.ts';
import { rootName } from '../../supervisors/root.ts';
import { startThreadWritersSup, threadWritersSupChild } from '../../supervisors/langgraph-threads-sup.ts';
import { threadWriter, type WriterDeps, type WriterRequest } from './thread-writer.ts';

let instances = 0;

export class ThreadWriters {
  private readonly live = new Map<string, Pid>();
  private readonly starting = new Map<string, Promise<Pid>>();
  private readonly supervisorName: string;
  private readonly childId: string;
  private supervisor: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly writerDeps: WriterDeps;

  constructor(
    private readonly options: {
      /** The runtime whose root adopts the supervisor; undefined: standalone. */
      readonly runtimeName: string | undefined;
      readonly deps: Omit<WriterDeps, 'retire'>;
    },
  ) {
    const n = ++instances;
    this.childId = `langgraph_threads_${n}`;
    this.supervisorName = `${options.runtimeName ?? 'mnemo'}_langgraph_threads_${n}_${process.pid}`;
    this.writerDeps = {
      ...options.deps,
      retire: (threadId, pid) => {
        if (this.live.get(threadId) === pid) this.live.delete(threadId);
      },
    };
  }

  async request<R>(threadId: string, request: WriterRequest): Promise<R> {
    for (;;) {
      const pid = await this.writerFor(threadId);
      try {
        return await call<R>(pid, request, { timeoutMs: Infinity });
      } catch (error) {
        if (error instanceof ExitError && (error.code === 'normal' || error.code === 'noproc')) {
          if (this.live.get(threadId) === pid) this.live.delete(threadId);
          continue;
        }
        if (error instanceof ExitError && error.code === 'shutdown') throw closed();
        throw error;
      }
    }
  }

  /** Stop the writers (each finishes the requests it was handed first) and their supervisor. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.starting.values()]);
      if (this.supervisor === undefined) return;
      await this.supervisor.catch(() => undefined);
      if (whereis(this.supervisorName) === undefined) return;
      if (this.options.runtimeName === undefined) {
        await stop(this.supervisorName, 'shutdown').catch(() => undefined);
      } else {
        const root = rootName(this.options.runtimeName);
        await terminateChild(root, this.childId).catch(() => undefined);
        await deleteChild(root, this.childId).catch(() => undefined);
      }
    })();
    return this.closing;
  }

  private writerFor(threadId: string): Promise<Pid> {
    if (this.closing !== undefined) return Promise.reject(closed());
    const pid = this.live.get(threadId);
    if (pid !== undefined && isAlive(pid)) return Promise.resolve(pid);
    const pending = this.starting.get(threadId);
    if (pending !== undefined) return pending;
    const started = this.startWriter(threadId).finally(() => this.starting.delete(threadId));
    this.starting.set(threadId, started);
    return started;
  }

  private async startWriter(threadId: string): Promise<Pid> {
    this.supervisor ??= this.startSupervisor();
    await this.supervisor;
    let pid: Pid | undefined;
    try {
      pid = await startChild(this.supervisorName, threadId);
    } catch (error) {
      if (error instanceof ExitError && (error.code === 'noproc' || error.code === 'shutdown')) throw closed();
      throw error;
    }
    if (pid === undefined) throw new Error(`thread writer for ${threadId} did not start`);
    this.live.set(threadId, pid);
    return pid;
  }

  private async startSupervisor(): Promise<void> {
    // Writers trap exits: a supervisor's shutdown lets each finish what it was handed.
    const startWriter = (threadId: string) => spawn(threadWriter(), { input: { threadId, deps: this.writerDeps }, trapExit: true });
    if (this.options.runtimeName === undefined) {
      await startThreadWritersSup(this.supervisorName, startWriter);
      return;
    }
    const spec = threadWritersSupChild(this.childId, this.supervisorName, startWriter);
    try {
      await startChild(rootName(this.options.runtimeName), spec);
    } catch (error) {
      if (error instanceof ExitError && (error.code === 'noproc' || error.code === 'shutdown')) throw closed();
      throw error;
    }
  }
}

function closed(): StorageError {
  return new StorageError('store_closed', 'the LangGraph saver is closed (or its runtime stopped)');
}
