/**
 * `POST /api/chat/stream`: a chat turn as Server-Sent Events. The body and its validation are
 * `/api/chat`'s (a bad body gets the same 422/400 JSON answer, before any event). Then
 * `200 text/event-stream`, and one event per step, each written (and so flushed) as it comes:
 *
 *   event: delta        data: {"text": "..."}                     a piece of the reply
 *   event: tool_call    data: {"name": "...", "input": "..."}     a memory tool starts
 *   event: tool_result  data: {"name": "...", "output": "..."}    it finished
 *   event: done         data: exactly what /api/chat answers      the reply is stored
 *   event: error        data: {"detail": "...", "code": "..."}    the turn failed (as /api/chat's error body)
 *
 * The stream ends after `done` or `error`. The turn runs under `turnSignal`: a client that
 * goes away, or the server's stop deadline, cancels the model call and the turn is stored as
 * interrupted with the text streamed so far.
 *
 * `Idempotency-Key` (checked by the route, before any event), as on `/api/chat`: the turn runs
 * once per key and session. A retry after it answered streams the stored reply (one `delta`,
 * then `done`) without a model call or new rows; a retry while it runs waits for it and streams
 * its reply the same way. A keyed turn is not cancelled when its client goes away (a retry may be
 * waiting for it); only the stop deadline cancels it. No compression or proxy buffering
 * (`x-accel-buffering: no`, `cache-control: no-cache`).
 */
import type { FastifyReply } from 'fastify';
import type { ChatStreamEvent } from '../recall/index.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import { errorResponse } from './server-errors.ts';
import type { RecallApi } from './services.ts';
import { turnSignal } from './turn-signal.ts';

export interface ChatTurnBody {
  user_id: string;
  session_id: string;
  message: string;
}

export async function streamChat(
  reply: FastifyReply,
  recall: RecallApi,
  body: ChatTurnBody,
  stopSignal: AbortSignal | undefined,
  /** A checked `Idempotency-Key`. */
  idempotencyKey?: string,
): Promise<void> {
  const turn = turnSignal(reply, stopSignal, { followClient: idempotencyKey === undefined });
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  // Nagle would hold back a small event behind the previous one's ACK.
  res.socket?.setNoDelay(true);
  const send = (event: string, data: unknown): void => {
    if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    const events = recall.chatStream({
      userId: body.user_id,
      sessionId: body.session_id,
      message: body.message,
      signal: turn.signal,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    for await (const event of events) {
      const [name, data] = wireEvent(event);
      send(name, data);
    }
  } catch (err) {
    const { body: errorBody, logAsError } = errorResponse(err, 0);
    if (logAsError) reply.log.error({ err }, 'chat stream failed');
    send('error', errorBody);
  } finally {
    turn.dispose();
    if (!res.writableEnded) res.end();
  }
}

function wireEvent(event: ChatStreamEvent): [string, unknown] {
  switch (event.type) {
    case 'delta':
      return ['delta', { text: event.text }];
    case 'tool_call':
      return ['tool_call', { name: event.name, input: event.input }];
    case 'tool_result':
      return ['tool_result', { name: event.name, output: event.output }];
    case 'done': {
      const r = event.result;
      return [
        'done',
        {
          reply: r.reply,
          memory_hits: r.memoryHits,
          title: r.title,
          tool_calls: r.toolCalls.map(({ name, input, output }) => ({ name, input, output })),
        },
      ];
    }
  }
}
