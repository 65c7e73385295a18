import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { http } from '../support/http.ts';

// The server's /mcp through the SDK's own client over Streamable HTTP: the user from the
// credentials, the library's rules and codes, no way into another user's memory.
const TOOLS = ['search_memory', 'remember', 'update_memory', 'forget', 'list_sessions', 'get_session_window', 'get_daily_window'];

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
  return client;
}

type Structured = Record<string, unknown> & { items: Record<string, unknown>[] };
const data = (r: unknown) => (r as CallToolResult).structuredContent as Structured;
const call = async (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('MCP over Streamable HTTP (/mcp)', () => {
  let srv: TestServer;
  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    srv = await startTestServer({ token: 'shared-secret', adminToken: 'admin-secret', userTokens: { 'alice-token': 'alice', 'bob-token': 'bob' } });
    await srv.recall.chat({ userId: 'alice', sessionId: 'trip', message: 'I am planning a trip to Lisbon in May' });
    await srv.recall.chat({ userId: 'alice', sessionId: 'trip', message: 'book a hotel near the river' });
    alice = await connect(srv.url, { authorization: 'Bearer alice-token' });
    bob = await connect(srv.url, { authorization: 'Bearer bob-token' });
  });
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await srv?.close();
  });

  it('lists the memory tools with their schemas, and the resources', async () => {
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    expect(tools.find((t) => t.name === 'search_memory')!.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(tools.find((t) => t.name === 'list_sessions')!.annotations?.readOnlyHint).toBe(true);
    const { resources } = await alice.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['mnemo://facts', 'mnemo://sessions/trip']);
    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['mnemo://sessions/{session_id}']);
  });

  it('searches with anchors and reads the session and the day around a hit', async () => {
    const found = data(await call(alice, 'search_memory', { query: 'Lisbon trip' }));
    expect(found.ranking).toBe('bm25');
    const hit = found.items.find((h) => h['source'] === 'session')!;
    expect(hit).toMatchObject({ session_id: 'trip', message_id: 1, role: 'user' });
    const around = data(await call(alice, 'get_session_window', { session_id: 'trip', message_id: hit['message_id'], after: 1 }));
    expect(around.items.map((r) => [r['message_id'], r['role']])).toEqual([[1, 'user'], [2, 'assistant']]);
    const day = data(await call(alice, 'get_daily_window', { message_id: hit['daily_message_id'], day: hit['day'], after: 2 }));
    expect(day.items.map((r) => r['content'])).toContain('book a hotel near the river');
    const sessions = data(await call(alice, 'list_sessions', {}));
    expect(sessions.items.map((s) => s['session_id'])).toEqual(['trip']);
    const transcript = await alice.readResource({ uri: 'mnemo://sessions/trip' });
    expect(JSON.parse((transcript.contents[0] as { text: string }).text)).toHaveLength(4);
  });

  it('remembers, updates with compare-and-set, and forgets facts', async () => {
    const stored = data(await call(alice, 'remember', { text: 'prefers window seats', key: 'seat' }));
    expect(stored).toMatchObject({ status: 'added', item: { text: 'prefers window seats', key: 'seat', version: 1 } });
    const id = (stored['item'] as { id: string }).id;
    const updated = data(await call(alice, 'update_memory', { id, text: 'prefers aisle seats', version: 1 }));
    expect(updated).toMatchObject({ status: 'superseded', item: { text: 'prefers aisle seats' } });
    const newId = (updated['item'] as { id: string }).id;
    // What was read before the update is stale now: nothing is written.
    const stale = await call(alice, 'update_memory', { id, text: 'no preference', version: 1 });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent).toMatchObject({ error: { code: 'memory_conflict' } });
    const facts = await alice.readResource({ uri: 'mnemo://facts' });
    expect((JSON.parse((facts.contents[0] as { text: string }).text) as { text: string }[]).map((f) => f.text)).toEqual(['prefers aisle seats']);
    expect(data(await call(alice, 'forget', { id: newId }))).toMatchObject({ item: { id: newId } });
    expect(await srv.recall.listFacts('alice')).toEqual([]);
  });

  it('refuses bad arguments with the library’s codes', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['search_memory', { query: 42 }, 'invalid_query'],
      ['search_memory', { query: 'x', day: 'May 3' }, 'invalid_day'],
      ['search_memory', { query: 'x', limit: 'ten' }, 'invalid_filter'],
      ['get_session_window', { session_id: ' trip', message_id: 1 }, 'invalid_id'],
      ['remember', { text: '' }, 'invalid_message'],
      ['update_memory', { id: 'm1', text: 'x', version: 0 }, 'invalid_message'],
      ['forget', { id: 'm999' }, 'memory_not_found'],
    ];
    for (const [name, args, code] of cases) {
      const r = await call(alice, name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect((r.structuredContent as { error: { code: string } }).error.code, `${name} ${JSON.stringify(args)}`).toBe(code);
    }
    await expect(alice.readResource({ uri: 'mnemo://sessions/%20trip' })).rejects.toMatchObject({ data: { code: 'invalid_id' } });
  });

  it('keeps one user out of another’s memory', async () => {
    expect(data(await call(bob, 'search_memory', { query: 'Lisbon' })).items).toEqual([]);
    expect(data(await call(bob, 'get_session_window', { session_id: 'trip', message_id: 1, after: 3 })).items).toEqual([]);
    expect(data(await call(bob, 'list_sessions', {})).items).toEqual([]);
    expect(JSON.parse(((await bob.readResource({ uri: 'mnemo://sessions/trip' })).contents[0] as { text: string }).text)).toEqual([]);
    // A tool takes no user id: one sent is ignored, the caller's own user is used.
    expect(data(await call(bob, 'search_memory', { query: 'Lisbon', user_id: 'alice' })).items).toEqual([]);
  });

  it('refuses a caller whose credentials do not name a user', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream' };
    for (const token of ['shared-secret', 'admin-secret']) {
      const r = await http(srv.url, 'POST', '/mcp', { body: init, headers: { ...headers, authorization: `Bearer ${token}` } });
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({ code: 'forbidden' });
    }
    expect((await http(srv.url, 'POST', '/mcp', { body: init, headers })).status).toBe(401);
    const get = await http(srv.url, 'GET', '/mcp', { headers: { authorization: 'Bearer alice-token' } });
    expect([get.status, get.headers['allow']]).toEqual([405, 'POST']);
  });
});

describe('MCP behind a trusted proxy', () => {
  it('acts for the user the proxy names', async () => {
    const srv = await startTestServer({ token: 'proxy-secret', trustUserHeader: 'x-forwarded-user' });
    try {
      await srv.recall.chat({ userId: 'carol', sessionId: 'food', message: 'I am allergic to peanuts' });
      const carol = await connect(srv.url, { authorization: 'Bearer proxy-secret', 'x-forwarded-user': 'carol' });
      const found = data(await call(carol, 'search_memory', { query: 'peanuts' }));
      expect(found.items.map((h) => [h['source'], h['session_id']])).toContainEqual(['session', 'food']);
      await carol.close();
      const dave = await connect(srv.url, { authorization: 'Bearer proxy-secret', 'x-forwarded-user': 'dave' });
      expect(data(await call(dave, 'search_memory', { query: 'peanuts' })).items).toEqual([]);
      await dave.close();
    } finally {
      await srv.close();
    }
  });
});
