import { connect } from 'node:net';
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
