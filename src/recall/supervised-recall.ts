import type { ServiceSlot } from '../otp/index.ts';
import type { Recall } from './recall-api.ts';
import { RecallClosedError } from './recall-errors.ts';
import { StorageError } from '../memory/contract/memory-errors.ts';

/** The runtime's layered memory, minus `close`: the runtime closes it on `stop()`. */
export type SupervisedRecall = Omit<Recall, 'close'>;

/** Every call of `Recall` that returns a promise: forwarded as is. */
const FORWARDED = [
  'chat', 'recordTurn', 'listSessions', 'listSessionsPage', 'createSession', 'sessionMessages', 'sessionMessagesPage', 'forkSession', 'deleteSession',
  'searchSession', 'searchDaily', 'sessionWindow', 'search', 'embeddingsStatus', 'embeddingsIdle', 'rebuildSearchIndex', 'dailyWindow',
  'dailyMessages', 'getLongTerm', 'setLongTerm', 'undoLongTerm', 'longTermHistory', 'listFacts', 'factHistory', 'remember', 'updateFact',
  'forgetFact', 'rankFacts', 'extractionIdle', 'extractionStatus', 'retryDeadExtractions', 'dialogueLog', 'importDemoFolder',
  'exportDemoFolder', 'summaries', 'summaryIdle', 'getSessionMessages', 'listMemory', 'memoryHistory', 'updateMemory', 'forgetMemory', 'rankMemory',
] as const satisfies ReadonlyArray<Exclude<keyof Recall, 'memoryTools' | 'chatStream' | 'close'>>;

/**
 * The runtime's `recall`: every call goes to the service that the supervised `recall` process
 * currently publishes, waiting while it restarts, so a caller never holds a dead incarnation.
 *
 * `eraseUser(u, { compact: true })` erases through the service, then runs `compact` (the
 * runtime's: it stops the recall process, so it cannot run inside the service's own call). A
 * compaction that fails rejects with its StorageError's code, saying (and `details.erased`)
 * that the erasure itself committed. `refuseCompact` says why a runtime cannot compact at all
 * (its storage is not LMDB): then `{ compact: true }` is refused before anything is erased.
 */
export function supervisedRecall(
  slot: ServiceSlot<Recall>,
  compact: () => Promise<{ bytesBefore: number; bytesAfter: number; pauseMs: number }>,
  refuseCompact: () => Error | undefined = () => undefined,
): SupervisedRecall {
  const forwarded = Object.fromEntries(
    FORWARDED.map((key) => [
      key,
      async (...args: unknown[]) => {
        const service = await slot.get();
        return (service[key] as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as Pick<Recall, (typeof FORWARDED)[number]>;
  return {
    ...forwarded,
    // The stream is read from the incarnation current when it starts; `yield*` hands a cut on.
    chatStream: async function* (input) {
      const service = await slot.get();
      yield* service.chatStream(input);
    },
    eraseUser: async (userId, options) => {
      const service = await slot.get();
      const { compact: compacting, ...rest } = options ?? {};
      const refused = compacting === true ? refuseCompact() : undefined;
      if (refused !== undefined) throw refused;
      const report = await service.eraseUser(userId, rest);
      if (compacting !== true) return report;
      let done;
      try {
        done = await compact();
      } catch (error) {
        // The erasure stands (erasing again is harmless and compacts again): say so.
        if (!(error instanceof StorageError)) throw error;
        throw new StorageError(error.code, `user ${userId} was erased, but the compaction that followed failed: ${error.message}`, { ...error.details, erased: true, ...report }, { cause: error });
      }
      const { bytesBefore, bytesAfter, pauseMs } = done;
      return { ...report, compaction: { bytesBefore, bytesAfter, pauseMs } };
    },
    memoryTools: (userId, sessionId) => {
      const service = slot.current();
      if (service === undefined) throw new RecallClosedError();
      return service.memoryTools(userId, sessionId);
    },
  };
}
