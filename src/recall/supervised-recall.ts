import type { ServiceSlot } from '../otp/index.ts';
import type { Recall } from './recall.ts';
import { RecallClosedError, RecallUnavailableError } from './recall-errors.ts';
import { StorageError } from '../memory/contract/memory-errors.ts';

/** The runtime's layered memory, minus `close`: the runtime closes it on `stop()`. */
export type SupervisedRecall = Omit<Recall, 'close'>;

type Forwarded = Exclude<keyof Recall, 'memoryTools' | 'chatStream' | 'close'>;

/**
 * The runtime's `recall`: every call goes to the service that the supervised `recall` process
 * currently publishes, waiting while it restarts, so a caller never holds a dead incarnation.
 *
 * `eraseUser(u, { compact: true })` erases through the service, then runs `compact` (the
 * runtime's: it stops the recall process, so it cannot run inside the service's own call). A
 * compaction that fails rejects with its StorageError's code, saying (and `details.erased`)
 * that the erasure itself committed.
 */
export function supervisedRecall(slot: ServiceSlot<Recall>, compact: () => Promise<{ bytesBefore: number; bytesAfter: number; pauseMs: number }>): SupervisedRecall {
  const forward = <K extends Forwarded>(key: K): Recall[K] =>
    (async (...args: unknown[]) => {
      const service = await slot.get();
      return (service[key] as (...a: unknown[]) => Promise<unknown>)(...args);
    }) as Recall[K];
  return {
    chat: forward('chat'),
    // The stream is read from the incarnation current when it starts; `yield*` hands a cut on.
    chatStream: async function* (input) {
      const service = await slot.get();
      yield* service.chatStream(input);
    },
    recordTurn: forward('recordTurn'),
    listSessions: forward('listSessions'),
    createSession: forward('createSession'),
    getSessionMessages: forward('getSessionMessages'),
    listSessionsPage: forward('listSessionsPage'),
    sessionRowsPage: forward('sessionRowsPage'),
    forkSession: forward('forkSession'),
    deleteSession: forward('deleteSession'),
    searchSession: forward('searchSession'),
    searchDaily: forward('searchDaily'),
    sessionWindow: forward('sessionWindow'),
    search: forward('search'),
    embeddingsStatus: forward('embeddingsStatus'),
    embeddingsIdle: forward('embeddingsIdle'),
    rebuildSearchIndex: forward('rebuildSearchIndex'),
    dailyWindow: forward('dailyWindow'),
    dailyMessages: forward('dailyMessages'),
    getLongTerm: forward('getLongTerm'),
    setLongTerm: forward('setLongTerm'),
    undoLongTerm: forward('undoLongTerm'),
    longTermHistory: forward('longTermHistory'),
    listMemory: forward('listMemory'),
    memoryHistory: forward('memoryHistory'),
    remember: forward('remember'),
    updateMemory: forward('updateMemory'),
    forgetMemory: forward('forgetMemory'),
    rankMemory: forward('rankMemory'),
    extractionIdle: forward('extractionIdle'),
    extractionStatus: forward('extractionStatus'),
    retryDeadExtractions: forward('retryDeadExtractions'),
    dialogueLog: forward('dialogueLog'),
    importDemoFolder: forward('importDemoFolder'),
    exportDemoFolder: forward('exportDemoFolder'),
    eraseUser: async (userId, options) => {
      const service = await slot.get();
      const { compact: compacting, ...rest } = options ?? {};
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
