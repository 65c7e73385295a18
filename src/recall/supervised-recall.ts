import type { ServiceSlot } from '../otp/index.ts';
import type { Recall } from './recall-api.ts';
import { RecallClosedError } from './recall-errors.ts';

/** The runtime's layered memory, minus `close`: the runtime closes it on `stop()`. */
export type SupervisedRecall = Omit<Recall, 'close'>;

/** Every call of `Recall` that returns a promise: forwarded as is. */
const FORWARDED = [
  'chat', 'listSessions', 'listSessionsPage', 'createSession', 'sessionMessages', 'sessionMessagesPage', 'forkSession', 'deleteSession',
  'searchSession', 'searchDaily', 'sessionWindow', 'search', 'embeddingsStatus', 'embeddingsIdle', 'rebuildSearchIndex', 'dailyWindow',
  'dailyMessages', 'getLongTerm', 'setLongTerm', 'undoLongTerm', 'longTermHistory', 'listFacts', 'factHistory', 'remember', 'updateFact',
  'forgetFact', 'rankFacts', 'extractionIdle', 'extractionStatus', 'retryDeadExtractions', 'dialogueLog', 'importDemoFolder',
  'exportDemoFolder', 'eraseUser', 'getSessionMessages', 'listMemory', 'memoryHistory', 'updateMemory', 'forgetMemory', 'rankMemory',
] as const satisfies ReadonlyArray<Exclude<keyof Recall, 'memoryTools' | 'chatStream' | 'close'>>;

/**
 * The runtime's `recall`: every call goes to the service that the supervised `recall` process
 * currently publishes, waiting while it restarts, so a caller never holds a dead incarnation.
 */
export function supervisedRecall(slot: ServiceSlot<Recall>): SupervisedRecall {
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
    memoryTools: (userId, sessionId) => {
      const service = slot.current();
      if (service === undefined) throw new RecallClosedError();
      return service.memoryTools(userId, sessionId);
    },
  };
}
