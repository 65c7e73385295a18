/**
 * Letting a client read the 413 of a body it is still sending. Node ends a `Connection: close`
 * exchange as soon as the answer is written (`socket.destroySoon()`); the client's bytes that
 * arrive after that make the kernel answer with a reset, which can reach the client before it
 * read the 413 (it then sees ECONNRESET or EPIPE instead). So for a request whose body was not
 * read to its end, the rest is read and discarded, and the socket is closed only once the body
 * ended, or after `DRAIN_MAX_BYTES` more bytes or `DRAIN_MAX_MS`, whichever comes first.
 */
import type { IncomingMessage } from 'node:http';

export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

export function drainRefusedBody(request: IncomingMessage): void {
  if (request.complete) return;
  const socket = request.socket as IncomingMessage['socket'] & { destroySoon?: () => void };
  const destroySoon = socket.destroySoon?.bind(socket);
  let drained = 0;
  let ended = false;
  let closeWanted = false;
  let timer: NodeJS.Timeout | undefined;
  const close = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    request.removeListener('data', onData);
    if (destroySoon !== undefined) destroySoon();
    else socket.end();
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES && closeWanted) close();
  };
  request.on('data', onData);
  request.once('end', () => {
    ended = true;
    if (closeWanted) close();
  });
  request.resume();
  if (destroySoon === undefined) return;
  socket.destroySoon = () => {
    closeWanted = true;
    if (ended || drained > DRAIN_MAX_BYTES) return close();
    timer = setTimeout(close, DRAIN_MAX_MS);
    timer.unref();
  };
}
