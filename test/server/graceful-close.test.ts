import { createServer as createHttpServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// close() of a running server: it stops accepting, answers the turn in flight, and resolves
// even when that answer went over a keep-alive connection (as browsers and fetch use), or a
// client holds a connection it has not sent anything on (as browsers preconnect).

let stub: ChatStub;
let t: TestServer;
afterEach(async () => {
  await t?.runtime.stop();
  await stub?.close();
});

it('answers a turn in flight on a keep-alive connection, then finishes closing', async () => {
  stub = await startChatStub();
  t = await startTestServer({
    llm: openAICompatible({ apiKey: 'sk-test', baseURL: stub.baseURL, model: 'stub-model', maxRetries: 0 }),
  });
  // fetch keeps connections alive; one idle connection exists before the turn starts.
  expect((await fetch(`${t.url}/api/conversations?user_id=u`)).status).toBe(200);

  stub.hold();
  const turn = fetch(`${t.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: 'u', session_id: 's', message: 'closing time' }),
  });
  await stub.waitForRequest(1);
  let closed = false;
  const closing = t.server.close().then(() => (closed = true));
  await new Promise((r) => setImmediate(r));
  expect(closed).toBe(false); // the turn is still running

  stub.release();
  const res = await turn;
  expect(res.status).toBe(200);
  expect(res.headers.get('connection')).toBe('close');
  expect(((await res.json()) as { reply: string }).reply).toBe('stub answer to "closing time" (1 tool results)');
  await closing;

  const rows = await t.recall.getSessionMessages('u', 's');
  expect(rows.map((r) => r.role)).toEqual(['user', 'assistant']);
});

it('closes a connection that never sent a request instead of waiting for the client to drop it', async () => {
  t = await startTestServer();
  const preconnect = connect(t.server.port, '127.0.0.1');
  await once(preconnect, 'connect');
  const droppedByServer = once(preconnect, 'close');

  await t.server.close();
  await droppedByServer; // the client never closes it: only the server can have
  expect(preconnect.destroyed).toBe(true);
});

/** A chat-completions endpoint that never answers; `cancelled` resolves when a call is dropped. */
async function hungModel(): Promise<{ baseURL: string; received: Promise<void>; cancelled: Promise<void>; close(): Promise<void> }> {
  let onReceived: () => void = () => {};
  let onCancelled: () => void = () => {};
  const received = new Promise<void>((r) => (onReceived = r));
  const cancelled = new Promise<void>((r) => (onCancelled = r));
  const server = createHttpServer((req, res) => {
    req.resume();
    onReceived();
    res.once('close', () => onCancelled()); // the client (the model adapter) dropped the call
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    received,
    cancelled,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

it('answers 408 and closes the connection when a body trickles in slower than the request timeout', async () => {
  t = await startTestServer({ requestTimeoutMs: 200 });
  const socket = connect(t.server.port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  const closed = once(socket, 'close');
  socket.write('POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
  // One more byte now and then, never the whole body: the server must not wait for it.
  const trickle = setInterval(() => socket.writable && socket.write(' '), 50);
  try {
    await closed;
  } finally {
    clearInterval(trickle);
  }
  expect(answer).toMatch(/^HTTP\/1.1 408 /);
  // A graceful stop is not held up by it either.
  await t.server.close();
});

it('cancels a turn whose model hangs once the stop deadline passes, and stores it as interrupted', async () => {
  const model = await hungModel();
  try {
    t = await startTestServer({
      llm: openAICompatible({ apiKey: 'sk-test', baseURL: model.baseURL, model: 'm', maxRetries: 0, timeoutMs: 60_000 }),
      stopTimeoutMs: 200,
    });
    const turn = t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's', message: 'hang on' } });
    await model.received;
    await t.server.close(); // finishes: the deadline cancels the turn instead of waiting a minute
    await model.cancelled;

    const res = await turn;
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ detail: 'the server is stopping: the turn was interrupted', code: 'turn_interrupted' });
    const rows = await t.recall.getSessionMessages('u', 's');
    expect(rows.map((r) => [r.role, r.content, r.error?.code])).toEqual([
      ['user', 'hang on', undefined],
      ['assistant', '', 'turn_interrupted'],
    ]);
    expect(rows[1]!.error?.message).toBe('the turn was interrupted: the server is stopping');
  } finally {
    await model.close();
  }
});

it("cancels a turn's model call when its client disconnects, and stores the turn as interrupted", async () => {
  const model = await hungModel();
  try {
    t = await startTestServer({
      llm: openAICompatible({ apiKey: 'sk-test', baseURL: model.baseURL, model: 'm', maxRetries: 0, timeoutMs: 60_000 }),
    });
    const client = new AbortController();
    const turn = fetch(`${t.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'u', session_id: 'gone', message: 'never mind' }),
      signal: client.signal,
    }).catch((err: unknown) => err);
    await model.received;
    client.abort();
    await turn;
    await model.cancelled; // the model call is dropped, not left running for nobody

    let rows = await t.recall.getSessionMessages('u', 'gone');
    while (rows.length < 2) {
      await new Promise((r) => setTimeout(r, 10));
      rows = await t.recall.getSessionMessages('u', 'gone');
    }
    expect(rows.map((r) => [r.role, r.error?.code])).toEqual([
      ['user', undefined],
      ['assistant', 'turn_interrupted'],
    ]);
    expect(rows[1]!.error?.message).toBe('the turn was interrupted: the client disconnected');
    await t.server.close();
  } finally {
    await model.close();
  }
});
