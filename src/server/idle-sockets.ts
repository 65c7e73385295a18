import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's sockets that carry no request right now, including ones that have never sent
 * one. Node's `closeIdleConnections()` counts a fresh connection as busy (its request timer
 * starts at accept), so a browser's speculative preconnect held `close()` open until the
 * browser dropped it; a graceful stop destroys these sockets itself.
 */
export interface IdleSockets {
  /** Destroys every idle socket now and every socket that connects from now on; ends each
   *  busy one once its last answer is out. */
  closeAll(): void;
  /** `closeAll` was called. */
  readonly closing: boolean;
}

export function trackIdleSockets(server: Server): IdleSockets {
  const inFlight = new Map<Socket, number>();
  let closing = false;
  const settle = (socket: Socket, delta: number) => {
    if (!inFlight.has(socket)) return; // closed already
    const count = inFlight.get(socket)! + delta;
    inFlight.set(socket, count);
    // end(), not destroy(): the answer just written may still be on its way out.
    if (closing && count === 0) socket.end();
  };
  server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy();
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (request, response) => {
    settle(request.socket, +1);
    // `close` also covers an answer cut short by the client: it fires after `finish` or alone.
    response.once('close', () => settle(request.socket, -1));
  });
  return {
    closeAll() {
      closing = true;
      for (const [socket, count] of inFlight) if (count === 0) socket.destroy();
    },
    get closing() {
      return closing;
    },
  };
}
