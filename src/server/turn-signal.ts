import type { FastifyReply } from 'fastify';

/**
 * The signal a chat turn runs under: it fires when the client goes away before its answer is
 * written (the model call is then cancelled instead of running on for nobody) or when the
 * server's stop deadline passes (`stopSignal`). Its reason, a string, says which; the recall
 * service stores the turn as interrupted with it. `dispose()` drops the listeners once the
 * turn is over.
 */
export const CLIENT_GONE = 'the client disconnected';
export const SERVER_STOPPING = 'the server is stopping';

/** `followClient: false` (a turn under an idempotency key, which a retry may be waiting for):
 * only the stop deadline cancels it. */
export function turnSignal(
  reply: FastifyReply,
  stopSignal: AbortSignal | undefined,
  options: { followClient?: boolean } = {},
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableEnded) controller.abort(CLIENT_GONE);
  };
  const onStop = (): void => controller.abort(SERVER_STOPPING);
  if (options.followClient !== false) response.once('close', onClose);
  if (stopSignal?.aborted) onStop();
  else stopSignal?.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      response.off('close', onClose);
      stopSignal?.removeEventListener('abort', onStop);
    },
  };
}
