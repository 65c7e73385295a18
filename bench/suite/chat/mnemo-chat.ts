import { startMnemo } from '../adapters/mnemo.ts';
import type { ChatTurns } from './chat-service.ts';

/**
 * Mnemo's chat turn: `runtime.recall.chat({userId, sessionId, message})` offline (no LLM: the demo's
 * fallback reply and title), on a runtime with LMDB storage; every write of the turn is
 * committed and flushed before it resolves.
 */
export async function mnemoChat(dir: string): Promise<ChatTurns> {
  const runtime = await startMnemo(dir, 'lmdb');
  const recall = runtime.recall;
  return {
    label: 'Mnemo (LMDB)',
    id: 'mnemo-lmdb',
    async turn(userId, sessionId, message) {
      return (await recall.chat({ userId, sessionId, message })).reply;
    },
    close: () => runtime.stop(),
  };
}
