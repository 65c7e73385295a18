import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's sockets, for a stop that never waits on a client.
 *
 * - `closeAll` (the stop begins): every socket that carries no request right now is destroyed,
 *   including ones that have never sent one (Node's `closeIdleConnections()` counts a fresh
 *   connection as busy, so a browser's speculative preconnect held `close()` open until the
 *   browser dropped it), and so is every socket that connects from then on; a busy one ends
 *   once its last answer is out.
 * - `deadline` (the stop deadline has passed, turns are being cancelled): every socket whose
 *   request is still arriving is destroyed at once (an upload trickled a byte a second has no
 *   handler yet, so nothing is lost; only the request timeout would end it otherwise), and every
 *   socket left `graceMs` later, so a cancelled turn's 503 goes out first but a client that does
 *   not read its answer cannot hold the stop either.
 */
export interface IdleSockets {
  closeAll(): void;
  /** `closeAll` was called. */
  readonly closing: boolean;
  deadline(graceMs: number): void;
}

export function trackIdleSockets(server: Server): IdleSockets {
  /** Each open socket: its requests in flight, and the latest one. */
  const sockets = new Map<Socket, { inFlight: number; latest: IncomingMessage | null }>();
  let closing = false;
  const settle = (socket: Socket, delta: number) => {
    const state = sockets.get(socket);
    if (state === undefined) return; // closed already
    state.inFlight += delta;
    // end(), not destroy(): the answer just written may still be on its way out.
    if (closing && state.inFlight === 0) socket.end();
  };
  server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy();
    sockets.set(socket, { inFlight: 0, latest: null });
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response) => {
    const state = sockets.get(request.socket);
    if (state !== undefined) state.latest = request;
    settle(request.socket, +1);
    // `close` also covers an answer cut short by the client: it fires after `finish` or alone.
    response.once('close', () => settle(request.socket, -1));
  });
  const closeAll = () => {
    closing = true;
    for (const [socket, state] of sockets) if (state.inFlight === 0) socket.destroy();
  };
  return {
    closeAll,
    get closing() {
      return closing;
    },
    deadline(graceMs) {
      closeAll();
      for (const [socket, state] of sockets) if (state.latest !== null && !state.latest.complete) socket.destroy();
      // unref: a stop that finished sooner does not wait for it.
      setTimeout(() => {
        for (const socket of sockets.keys()) socket.destroy();
      }, graceMs).unref();
    },
  };
}
