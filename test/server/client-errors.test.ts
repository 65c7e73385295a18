import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// Requests that Node's HTTP parser refuses before fastify routes them get the API's `{detail}`
// body too. Sent over a raw socket: an HTTP client would percent-encode the URL itself.

/** Writes `head` as UTF-8 bytes, reads until the server closes, splits status and JSON body. */
function rawRequest(url: string, head: string): Promise<{ status: number; headers: string; body: unknown }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(Buffer.from(head, 'utf8')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const headers = text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body: JSON.parse(text.slice(split + 4)) });
    });
  });
}

describe('requests refused by the HTTP parser', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers raw non-ASCII bytes in a query string with 400 and a {detail} body', async () => {
    const res = await rawRequest(
      t.url,
      'GET /api/conversations/s1/search?user_id=u&keyword=咖啡&limit=20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    expect(res.body).toEqual({
      detail: 'invalid URL: only ASCII is allowed, percent-encode anything else (curl: -G --data-urlencode)',
    });
  });

  it('answers raw non-ASCII bytes in a path with the same body', async () => {
    const res = await rawRequest(t.url, 'GET /api/conversations/咖啡/messages?user_id=u HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body as object)).toEqual(['detail']);
  });

  it('answers oversized headers with 431 and a garbled request line with 400, both as {detail}', async () => {
    const big = await rawRequest(t.url, `GET /api/runtime HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(big.body).toEqual({ detail: 'request headers too large' });
    const garbled = await rawRequest(t.url, 'GARBAGE\r\n\r\n');
    expect(garbled.status).toBe(400);
    expect((garbled.body as { detail: string }).detail).toMatch(/^bad request: /);
  });

  it('still answers the same search percent-encoded, as curl --data-urlencode sends it', async () => {
    const res = await t.request('GET', `/api/conversations/s1/search?user_id=u&keyword=${encodeURIComponent('咖啡')}&limit=20`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [] });
  });
});
