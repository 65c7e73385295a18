import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { http, type HttpResponse } from '../support/http.ts';
import { roundRobin, startMnemo as start, type RunningMnemo } from '../support/mnemo-fleet.ts';
import { usePostgres } from '../support/postgres-server.ts';

/**
 * Many servers, one memory: `mnemo serve --postgres` processes on one database, reached
 * through a round-robin balancer with no session affinity (a loopback proxy here). Each server
 * is a real process, so SIGKILL ends the process that writes (support/mnemo-fleet.ts). The
 * model is the offline fallback: its reply quotes the message, so a reply shows which message
 * it answers.
 */
const db = usePostgres();
const ADMIN = 'fleet-admin-token';
const work = mkdtempSync(join(tmpdir(), 'mnemo-fleet-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function startMnemo(schema: string): Promise<RunningMnemo> {
  const server = await start({ databaseUrl: db.url, schema, cwd: work, args: ['--admin-token', ADMIN, '--rate-limit', '0', '--max-turns', '64', '--language', 'en'] });
  db.cleanup(() => server.kill());
  return server;
}

async function balancer(backends: () => string[]): Promise<{ url: string; inFlight(url: string): number }> {
  const lb = await roundRobin(backends);
  db.cleanup(() => lb.close());
  return lb;
}

const auth = { authorization: `Bearer ${ADMIN}`, 'x-mnemo-request': '1' };

/** Attempts that got no answer (the server died under them, or a 5xx): retried with their key. */
let retries = 0;

/** One chat turn, retried with its key through the balancer until a server answers it. */
async function chat(base: string, userId: string, sessionId: string, message: string, key: string): Promise<HttpResponse> {
  for (let attempt = 0; ; attempt++) {
    let res: HttpResponse | undefined;
    try {
      res = await http(base, 'POST', '/api/chat', { body: { user_id: userId, session_id: sessionId, message }, headers: { ...auth, 'idempotency-key': key } });
    } catch {
      // The connection died with its server: retry, as a client behind a balancer does.
    }
    if (res !== undefined && res.status < 500) return res;
    retries++;
    if (attempt > 60) throw new Error(`turn ${key} never answered: ${res?.status} ${res?.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function rows(base: string, userId: string, sessionId: string): Promise<Array<{ message_id: number; role: string; content: string }>> {
  const res = await http(base, 'GET', `/api/conversations/${sessionId}/messages?user_id=${userId}`, { headers: auth });
  expect(res.status, res.text).toBe(200);
  return (res.json as { items: Array<{ message_id: number; role: string; content: string }> }).items;
}

/** Ids 1..n, and each reply right after the message it answers. */
function expectTurns(list: Array<{ message_id: number; role: string; content: string }>, messages: readonly string[]): void {
  expect(list.map((r) => r.message_id)).toEqual(list.map((_, i) => i + 1));
  const users = list.filter((r) => r.role === 'user').map((r) => r.content);
  expect([...users].sort()).toEqual([...messages].sort());
  for (let i = 0; i < list.length; i += 2) {
    expect(list[i]!.role).toBe('user');
    expect(list[i + 1]?.role).toBe('assistant');
    expect(list[i + 1]!.content).toContain(list[i]!.content);
  }
}

describe('many servers on one PostgreSQL database', () => {
  it('start at once on an empty database (one migrates), and a turn written through one is read, searched, forked and erased through the others', async () => {
    const schema = db.schema('fleet');
    const [a, b, c] = await Promise.all([startMnemo(schema), startMnemo(schema), startMnemo(schema)]);
    for (const s of [a!, b!, c!]) expect((await http(s.url, 'GET', '/readyz')).status).toBe(200);

    const sent = await chat(a!.url, 'ada', 'trip', 'remember the blue kayak', 'k1');
    expect(sent.status, sent.text).toBe(200);
    expectTurns(await rows(b!.url, 'ada', 'trip'), ['remember the blue kayak']);

    const listed = await http(c!.url, 'GET', '/api/conversations?user_id=ada', { headers: auth });
    expect(JSON.stringify(listed.json)).toContain('trip');
    const found = await http(c!.url, 'GET', '/api/search?user_id=ada&q=kayak', { headers: auth });
    expect(found.status, found.text).toBe(200);
    expect(found.text).toContain('blue kayak');

    const fork = await http(b!.url, 'POST', '/api/conversations/trip/fork', { body: { user_id: 'ada', message_id: 1, new_session_id: 'trip2' }, headers: auth });
    expect(fork.status, fork.text).toBe(200);
    expect((await rows(c!.url, 'ada', 'trip2')).map((r) => r.content)).toEqual(['remember the blue kayak']);

    const erased = await http(c!.url, 'DELETE', '/api/users/ada', { headers: auth });
    expect(erased.status, erased.text).toBe(200);
    const after = await http(a!.url, 'GET', '/api/conversations?user_id=ada', { headers: auth });
    expect(after.text).not.toContain('trip');
    expect((await http(b!.url, 'GET', '/api/search?user_id=ada&q=kayak', { headers: auth })).text).not.toContain('kayak');
  }, 180_000);

  it('serializes concurrent turns of shared sessions across servers behind a round-robin balancer', async () => {
    const schema = db.schema('fleet');
    const servers = await Promise.all([startMnemo(schema), startMnemo(schema), startMnemo(schema)]);
    const lb = await balancer(() => servers.map((s) => s.url));
    const sessions = ['s1', 's2', 's3'];
    const perSession = 6;
    const sent = new Map(sessions.map((s) => [s, Array.from({ length: perSession }, (_, i) => `${s} message ${i}`)]));
    // Every turn of every session at once: the three servers take them in any order.
    const answers = await Promise.all(
      [...sent].flatMap(([session, messages]) => messages.map((m, i) => chat(lb.url, 'bo', session, m, `${session}-${i}`))),
    );
    for (const res of answers) expect(res.status, res.text).toBe(200);
    for (const [session, messages] of sent) expectTurns(await rows(servers[0]!.url, 'bo', session), messages);
  }, 240_000);

  it('loses no acknowledged turn over 20 rounds of a server SIGKILLed mid-turn, and stores each turn retried on another server once', async () => {
    const schema = db.schema('fleet');
    const servers = await Promise.all([startMnemo(schema), startMnemo(schema), startMnemo(schema)]);
    let live = servers.map((s) => s.url);
    const lb = await roundRobin(() => live);
    db.cleanup(() => lb.close());
    const sessions = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
    const acked = new Map<string, string[]>(sessions.map((s) => [s, []]));
    let stopping = false;
    // Each session's turns one after another (a client waits for its answer), sessions in parallel.
    const clients = Promise.all(
      sessions.map(async (session) => {
        for (let i = 0; !stopping; i++) {
          const message = `${session} turn ${i}`;
          const res = await chat(lb.url, 'cy', session, message, `${session}-${i}`);
          expect(res.status, res.text).toBe(200);
          acked.get(session)!.push(message);
        }
      }),
    );
    const retriesBefore = retries;
    for (let round = 0; round < 20; round++) {
      const slot = round % servers.length;
      const victim = servers[slot]!;
      // Killed while it holds a request: a turn in flight, its rows half-written or not at all.
      const deadline = Date.now() + 30_000;
      while (lb.inFlight(victim.url) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      await victim.kill();
      expect(victim.child.signalCode).toBe('SIGKILL');
      // The balancer's health check drops it; a replacement joins (blue/green, a restart).
      live = live.filter((u) => u !== victim.url);
      servers[slot] = await startMnemo(schema);
      live.push(servers[slot]!.url);
    }
    stopping = true;
    await clients;
    // Some turns were cut off on a killed server and answered by another on retry.
    expect(retries - retriesBefore).toBeGreaterThan(0);
    for (const [session, messages] of acked) {
      expect(messages.length).toBeGreaterThan(0);
      expectTurns(await rows(servers[0]!.url, 'cy', session), messages);
    }
  }, 300_000);
});
