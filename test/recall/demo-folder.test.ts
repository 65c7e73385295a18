import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../src/recall/rows/python-json.ts';
import type { JsonObject } from '../../src/message.ts';
import { createSearchPool } from '../../src/recall/index.ts';
import { SEARCH_DB_NAMES, SESSION_DOC } from '../../src/recall/storage/lmdb/search/search-dbs.ts';
import { HIGH, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { isLive, readStats } from '../../src/recall/storage/lmdb/search/search-index.ts';
import { itLmdb, onPostgres, openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
let work: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'mnemo-demo-folder-'));
});
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  rmSync(work, { recursive: true, force: true });
});

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, 'utf8');
}

/** JSONL as the demo writes it: `json.dumps(row, ensure_ascii=False)` per line. */
function jsonl(rows: JsonObject[]): string {
  return rows.map((r) => `${pythonJsonDumps(r)}\n`).join('');
}

const row = (ts: string, role: string, content: string, tag: string, extra: JsonObject = {}): JsonObject => ({
  ts,
  role,
  content,
  tags: [tag],
  meta: {},
  ...extra,
});

/** A folder in the demo's layout, with legacy and irregular rows. */
function writeDemoFolder(root: string): void {
  const u = join(root, 'demo-user');
  put(join(u, 'memory.md'), '用户喜欢喝茶\n生日是五月三号\n');
  put(
    join(u, 'conversations.json'),
    pythonJsonDumps({ s1: { title: '生日', updated_at: '2026-04-08T19:09:28' }, s2: { title: '旧对话', updated_at: '2026-04-07T08:00:00' } }, 2),
  );
  put(
    join(u, 'sessions', 's1.jsonl'),
    jsonl([
      row('2026-04-08T19:09:20', 'user', '我的生日是五月三号', 'session', { message_id: 1 }),
      row('2026-04-08T19:09:21', 'assistant', '记住了', 'session', { message_id: 2 }),
      row('2026-04-08T19:09:27', 'user', '我生日是哪天？', 'session', { message_id: 3 }),
      {
        ts: '2026-04-08T19:09:28',
        role: 'assistant',
        content: '五月三号',
        tags: ['session'],
        meta: { tool_calls: [{ name: 'search_session', input: '{"keyword": "生日"}', output: '#1 2026-04-08T19:09:20 | user: 我的生日是五月三号' }] },
        message_id: 4,
      },
    ]),
  );
  // Legacy rows written before message_id existed, then the demo's own ids.
  put(
    join(u, 'sessions', 's2.jsonl'),
    jsonl([
      row('2026-04-07T08:00:00', 'user', 'legacy one', 'session'),
      row('2026-04-07T08:00:01', 'assistant', 'legacy two', 'session'),
      row('2026-04-07T08:00:02', 'user', 'numbered three', 'session', { message_id: 3 }),
    ]),
  );
  // Irregular ids (hand edits, the demo's unlocked appends); not named by conversations.json.
  put(
    join(u, 'sessions', 's3.jsonl'),
    jsonl([
      row('t1', 'user', 'five', 'session', { message_id: 5 }),
      row('t2', 'assistant', 'six?', 'session'),
      row('t3', 'user', 'three', 'session', { message_id: '3' }),
      row('t4', 'user', 'flag', 'session', { message_id: true }),
    ]),
  );
  put(
    join(u, 'daily', '2026-04-08.jsonl'),
    jsonl([
      row('2026-04-08T19:09:20', 'user', '我的生日是五月三号', 'daily', { message_id: 1 }),
      { ts: '2026-04-08T19:09:21', role: 'assistant', content: '记住了', tags: ['daily'], meta: { session_id: 's1' }, message_id: 2 },
    ]),
  );
  put(join(u, 'daily', '2026-04-07.jsonl'), jsonl([row('2026-04-07T08:00:00', 'user', 'legacy one', 'daily')]));
  put(
    join(u, 'logs', 'llm_dialogue.jsonl'),
    jsonl([
      { ts: '2026-04-08T19:09:21', session_id: 's1', user_message: '我的生日是五月三号', assistant_reply: '记住了', memory_context: '[SESSION]\nuser: 我的生日是五月三号', tool_calls: [] },
      { ts: '2026-04-08T19:09:28', session_id: '../weird', user_message: 'x', assistant_reply: 'y', memory_context: '', tool_calls: [] },
    ]),
  );
  put(join(root, 'demo-user', '.DS_Store'), 'ignored');
  put(join(root, 'README.txt'), 'ignored too');
}

function filesUnder(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.startsWith('.') && entry.name !== 'README.txt') out.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return out;
}

describe('import of the demo folder layout', () => {
  it('sessions, titles, rows, anchors, tool calls and long-term memory come across', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    const report = await fx.recall.importDemoFolder(src);
    expect(report).toEqual({
      users: ['demo-user'],
      sessions: 3,
      sessionRows: 11,
      dailyRows: 3,
      logRows: 2,
      longTermDocuments: 1,
      renumbered: [],
    });
    const r = fx.recall;
    expect(await r.listSessions('demo-user')).toEqual([
      { sessionId: 's1', title: '生日', updatedAt: '2026-04-08T19:09:28' },
      { sessionId: 's2', title: '旧对话', updatedAt: '2026-04-07T08:00:00' },
    ]);
    const s1 = await r.getSessionMessages('demo-user', 's1');
    expect(s1[3]).toEqual({
      ts: '2026-04-08T19:09:28',
      role: 'assistant',
      content: '五月三号',
      messageId: 4,
      toolCalls: [{ name: 'search_session', input: '{"keyword": "生日"}', output: '#1 2026-04-08T19:09:20 | user: 我的生日是五月三号' }],
    });
    expect(await r.getLongTerm('demo-user')).toBe('用户喜欢喝茶\n生日是五月三号');
    expect((await r.searchDaily({ userId: 'demo-user', keyword: '生日' })).map((x) => [x.day, x.messageId, x.sessionId])).toEqual([
      ['2026-04-08', 1, null],
    ]);
    expect((await r.dailyMessages('demo-user', '2026-04-08'))[1]!.sessionId).toBe('s1');
  });

  it('legacy rows without message_id are numbered as the demo numbers them', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    expect((await fx.recall.getSessionMessages('demo-user', 's2')).map((x) => [x.messageId, x.content])).toEqual([
      [1, 'legacy one'],
      [2, 'legacy two'],
      [3, 'numbered three'],
    ]);
    expect((await fx.recall.sessionWindow({ userId: 'demo-user', sessionId: 's2', messageId: 2, before: 1 })).map((x) => x.content)).toEqual([
      'legacy one',
      'legacy two',
    ]);
  });

  it('a later chat continues the imported session after its last anchor', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    const dailyOfS1 = async () => (await fx!.recall.searchDaily({ userId: 'demo-user', keyword: '', limit: 200 })).filter((r) => r.sessionId === 's1').map((r) => r.content);
    const imported = await dailyOfS1();
    const result = await fx.recall.chat({ userId: 'demo-user', sessionId: 's1', message: 'hi again' });
    // The imported rows came with their own daily files: the turn adds its two rows, nothing more.
    expect(await dailyOfS1()).toEqual([...imported, 'hi again', result.reply]);
    expect(result.title).toBe('生日');
    expect(result.memoryHits).toBe(1);
    expect((await fx.recall.getSessionMessages('demo-user', 's1')).map((x) => x.messageId)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a user whose sessions were all deleted imports with the demo numbering again', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    fx.clock.set('2026-04-08T12:00:00+08:00');
    await fx.recall.chat({ userId: 'demo-user', sessionId: 'gone', message: 'soon deleted' });
    await fx.recall.deleteSession('demo-user', 'gone');
    await fx.recall.importDemoFolder(src);
    expect((await fx.recall.dailyMessages('demo-user', '2026-04-08')).map((x) => x.messageId)).toEqual([1, 2]);
  });
});

describe('imported ids are the demo\'s read-time ids', () => {
  async function importSession(rows: JsonObject[], daily?: JsonObject[]) {
    const src = join(work, 'memory');
    put(join(src, 'u', 'sessions', 's.jsonl'), jsonl(rows));
    put(join(src, 'u', 'conversations.json'), pythonJsonDumps({ s: { title: 't', updated_at: '2026-04-08T09:00:00' } }, 2));
    if (daily) put(join(src, 'u', 'daily', '2026-04-08.jsonl'), jsonl(daily));
    fx = openRecall();
    return fx.recall.importDemoFolder(src);
  }
  const ids = async () => (await fx!.recall.getSessionMessages('u', 's')).map((m) => [m.messageId, m.content]);

  it('"7" then a row without id stay 7 and 8, and the next turn continues at 9', async () => {
    const report = await importSession([row('t1', 'user', 'seven', 'session', { message_id: '7' }), row('t2', 'assistant', 'eight', 'session')]);
    expect(report.renumbered).toEqual([]);
    expect(await ids()).toEqual([
      [7, 'seven'],
      [8, 'eight'],
    ]);
    const r = fx!.recall;
    expect((await r.sessionWindow({ userId: 'u', sessionId: 's', messageId: 8, before: 1 })).map((m) => m.content)).toEqual(['seven', 'eight']);
    expect(await r.sessionWindow({ userId: 'u', sessionId: 's', messageId: 1, after: 5 })).toEqual([]);
    expect((await r.searchSession({ userId: 'u', sessionId: 's', keyword: 'eight' })).map((m) => m.messageId)).toEqual([8]);
    const turn = await r.chat({ userId: 'u', sessionId: 's', message: 'nine' });
    expect(await ids()).toEqual([
      [7, 'seven'],
      [8, 'eight'],
      [9, 'nine'],
      [10, turn.reply],
    ]);
    expect((await r.sessionWindow({ userId: 'u', sessionId: 's', messageId: 9, before: 1, after: 1 })).map((m) => m.messageId)).toEqual([8, 9, 10]);
    expect((await r.searchSession({ userId: 'u', sessionId: 's', keyword: 'nine' })).map((m) => m.messageId)).toEqual([9, 10]);
    const out = join(work, 'exported');
    await r.exportDemoFolder(out);
    const exported = readFileSync(join(out, 'u', 'sessions', 's.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as JsonObject);
    expect(exported.map((x) => x['message_id'])).toEqual(['7', undefined, 9, 10]);
  });

  // LMDB's: its search pool and its reads of the rows straight from the environment.
  itLmdb('the kept ids are what a pooled search and a search through another store return too', async () => {
    await importSession([row('t1', 'user', 'seven needle', 'session', { message_id: '7' }), row('t2', 'assistant', 'eight needle', 'session')]);
    await fx!.recall.chat({ userId: 'u', sessionId: 's', message: 'nine needle' });
    const q = { userId: 'u', sessionId: 's', keyword: 'needle' };
    const inline = (await fx!.recall.searchSession(q)).map((m) => m.messageId);
    expect(inline).toEqual([7, 8, 9, 10]);
    const pool = createSearchPool({ maxThreads: 1 });
    const pooled = openRecall({ dir: fx!.dir, pool, poolThreshold: 0 });
    const throughLog = openRecall({ dir: fx!.dir, directReads: false });
    try {
      expect((await pooled.recall.searchSession(q)).map((m) => m.messageId)).toEqual(inline);
      expect((await throughLog.recall.searchSession(q)).map((m) => m.messageId)).toEqual(inline);
    } finally {
      await pooled.recall.close();
      await pool.close();
      await pooled.close();
      await throughLog.close();
    }
  });

  it('a session holding ids 3 and 4 keeps them', async () => {
    await importSession([row('t1', 'user', 'three', 'session', { message_id: 3 }), row('t2', 'assistant', 'four', 'session', { message_id: 4 })]);
    expect(await ids()).toEqual([
      [3, 'three'],
      [4, 'four'],
    ]);
    expect((await fx!.recall.sessionWindow({ userId: 'u', sessionId: 's', messageId: 3, after: 1 })).map((m) => m.messageId)).toEqual([3, 4]);
  });

  it('a day holding 2, 3, 5 keeps its ids, and the next row of that day is 6', async () => {
    await importSession(
      [row('t1', 'user', 'x', 'session', { message_id: 1 })],
      [2, 3, 5].map((id) => row(`2026-04-08T09:00:0${id}`, 'user', `d${id}`, 'daily', { message_id: id })),
    );
    const r = fx!.recall;
    expect((await r.dailyMessages('u', '2026-04-08')).map((m) => m.messageId)).toEqual([2, 3, 5]);
    expect((await r.dailyWindow({ userId: 'u', messageId: 3, before: 1, after: 1, day: '2026-04-08' })).map((m) => m.content)).toEqual(['d2', 'd3', 'd5']);
    fx!.clock.set('2026-04-08T12:00:00+08:00');
    await r.chat({ userId: 'u', sessionId: 'new', message: 'later that day' });
    expect((await r.dailyMessages('u', '2026-04-08')).map((m) => m.messageId)).toEqual([2, 3, 5, 6, 7]);
  });

  it('only a row whose derived id repeats an earlier one gets a new id after the highest, and the report says so', async () => {
    const report = await importSession([
      row('t1', 'user', 'first', 'session'),
      row('t2', 'assistant', 'dup of 1', 'session', { message_id: 1 }),
      row('t3', 'user', 'five', 'session', { message_id: 5 }),
    ]);
    expect(await ids()).toEqual([
      [1, 'first'],
      [6, 'dup of 1'],
      [5, 'five'],
    ]);
    expect(report.renumbered).toEqual([{ file: 'u/sessions/s.jsonl', line: 2, demoId: 1, id: 6 }]);
    expect((await fx!.recall.sessionWindow({ userId: 'u', sessionId: 's', messageId: 6, before: 1, after: 1 })).map((m) => m.content)).toEqual(['first', 'dup of 1', 'five']);
  });
});

describe('round trip', () => {
  it('import then export gives back every file of the layout, byte for byte', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    const out = join(work, 'exported');
    const report = await fx.recall.exportDemoFolder(out);
    expect(report.users).toEqual(['demo-user']);
    expect(filesUnder(out)).toEqual(filesUnder(src));
  });

  it('rows written by Mnemo export in the demo shape, readable back with the same anchors', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm('u', 'likes tea');
    await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'hello' });
    const out = join(work, 'exported');
    await fx.recall.exportDemoFolder(out);
    const lines = readFileSync(join(out, 'u', 'sessions', 's.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('{"ts": "2026-04-08T10:00:00", "role": "user", "content": "hello", "tags": ["session"], "meta": {}, "message_id": 1}');
    expect(readFileSync(join(out, 'u', 'memory.md'), 'utf8')).toBe('likes tea\n');
    expect(JSON.parse(readFileSync(join(out, 'u', 'conversations.json'), 'utf8'))).toEqual({
      s: { title: 'hello', updated_at: '2026-04-08T10:00:00' },
    });
    const daily = readFileSync(join(out, 'u', 'daily', '2026-04-08.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as JsonObject);
    expect(daily.map((d) => [d['message_id'], (d['meta'] as JsonObject)['session_id'], d['tags']])).toEqual([
      [1, 's', ['daily']],
      [2, 's', ['daily']],
    ]);
    const log = JSON.parse(readFileSync(join(out, 'u', 'logs', 'llm_dialogue.jsonl'), 'utf8')) as JsonObject;
    expect(Object.keys(log)).toEqual(['ts', 'session_id', 'user_message', 'assistant_reply', 'memory_context', 'tool_calls']);

    const again = openRecall();
    try {
      await again.recall.importDemoFolder(out);
      expect(await again.recall.getSessionMessages('u', 's')).toEqual(await fx.recall.getSessionMessages('u', 's'));
      expect(await again.recall.listSessions('u')).toEqual(await fx.recall.listSessions('u'));
      const reexported = join(work, 're-exported');
      await again.recall.exportDemoFolder(reexported);
      expect(filesUnder(reexported)).toEqual(filesUnder(out));
    } finally {
      await again.close();
    }
  });
});

describe('rolling summaries in the folder', () => {
  it('an export writes each session’s summaries to summaries/{id}.jsonl; an import takes them back, and exports them again byte for byte', async () => {
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 5; i++) {
      await fx.recall.chat({ userId: 'u', sessionId: 's', message: `turn ${i}: ${'a few words about the summer trip '.repeat(4)}` });
      await fx.recall.summaryIdle();
    }
    await fx.recall.chat({ userId: 'u', sessionId: 'short', message: 'hi' });
    const summaries = await fx.recall.summaries('u', 's');
    expect(summaries.length).toBeGreaterThan(1);
    const out = join(work, 'exported');
    await fx.recall.exportDemoFolder(out);
    const lines = readFileSync(join(out, 'u', 'summaries', 's.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as JsonObject)).toEqual(summaries);
    expect(Object.keys(JSON.parse(lines[0]!) as JsonObject)).toEqual(['id', 'text', 'from', 'to', 'model', 'at', 'previous', 'method']);
    expect(readdirSync(join(out, 'u', 'summaries'))).toEqual(['s.jsonl']);

    const again = openRecall({ summary: { keepLast: 1, maxTokens: 40 } });
    try {
      await again.recall.importDemoFolder(out);
      expect(await again.recall.summaries('u', 's')).toEqual(summaries);
      await again.recall.chat({ userId: 'u', sessionId: 's', message: 'after the import' });
      const log = (await again.recall.dialogueLog('u', 's')).at(-1)!;
      expect(log.memoryContext.startsWith(`[SUMMARY]\n${summaries.at(-1)!.text}\n`)).toBe(true);
    } finally {
      await again.close();
    }
    const third = openRecall();
    try {
      await third.recall.importDemoFolder(out);
      const reexported = join(work, 're-exported');
      await third.recall.exportDemoFolder(reexported);
      expect(filesUnder(reexported)).toEqual(filesUnder(out));
    } finally {
      await third.close();
    }
  });

  it('refuses a summaries line that is not a summary, before anything is written', async () => {
    put(join(work, 'src', 'u', 'sessions', 's.jsonl'), jsonl([row('2026-04-08T10:00:00', 'user', 'hi', 'session')]));
    put(join(work, 'src', 'u', 'summaries', 's.jsonl'), jsonl([{ text: 'no provenance' }]));
    fx = openRecall();
    await expect(fx.recall.importDemoFolder(join(work, 'src'))).rejects.toMatchObject({ code: 'invalid_message' });
    expect(await fx.recall.listSessions('u')).toEqual([]);
  });
});

describe('refusals', () => {
  async function refused(root: string, code: string): Promise<void> {
    fx = openRecall();
    await expect(fx.recall.importDemoFolder(root)).rejects.toMatchObject({ code });
    expect(await fx.recall.listSessions('demo-user')).toEqual([]);
    expect(await fx.recall.getSessionMessages('demo-user', 's1')).toEqual([]);
    expect(await fx.recall.getLongTerm('demo-user')).toBe('');
  }

  it('a user folder whose name is not an encoded id refuses the whole import before anything is written', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    mkdirSync(join(src, 'bad%2fname'));
    await refused(src, 'invalid_id');
  });

  it('a session file whose name is not an encoded id is refused', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'demo-user', 'sessions', 'trailing .jsonl'), '');
    await refused(src, 'invalid_id');
  });

  it('a daily file that is not a real date is refused', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'demo-user', 'daily', '2026-02-30.jsonl'), '');
    await refused(src, 'invalid_id');
  });

  it('a conversations.json key that is not an id is refused', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'demo-user', 'conversations.json'), JSON.stringify({ 'a\u0000b': { title: 'x', updated_at: 'y' } }));
    await refused(src, 'invalid_id');
  });

  it('a symbolic link anywhere is refused', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    const outside = join(work, 'outside.jsonl');
    put(outside, jsonl([row('t', 'user', 'secret from outside', 'session')]));
    symlinkSync(outside, join(src, 'demo-user', 'sessions', 'linked.jsonl'));
    await refused(src, 'invalid_id');
  });

  it('a corrupt row is refused with invalid_message, naming the file and line', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'demo-user', 'sessions', 's4.jsonl'), '{"role": "user", "content": "ok"}\n{not json\n');
    fx = openRecall();
    const err = await fx.recall.importDemoFolder(src).catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'invalid_message' });
    expect((err as Error).message).toContain('s4.jsonl:2');
    expect(await fx.recall.listSessions('demo-user')).toEqual([]);
  });

  it('content that is not a string is refused', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'demo-user', 'daily', '2026-04-09.jsonl'), '{"role": "user", "content": 5}\n');
    await refused(src, 'invalid_message');
  });

  it('an import never merges into a user who already has memory', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    fx = openRecall();
    await fx.recall.chat({ userId: 'demo-user', sessionId: 'live', message: 'existing' });
    await expect(fx.recall.importDemoFolder(src)).rejects.toMatchObject({ code: 'invalid_option' });
    expect((await fx.recall.listSessions('demo-user')).map((c) => c.sessionId)).toEqual(['live']);
  });

  it('an export never writes into a non-empty user folder', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'x' });
    const out = join(work, 'exported');
    put(join(out, 'u', 'keep.txt'), 'mine');
    await expect(fx.recall.exportDemoFolder(out)).rejects.toMatchObject({ code: 'invalid_option' });
    expect(readdirSync(join(out, 'u'))).toEqual(['keep.txt']);
  });

  it('only the named users are imported or exported', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    put(join(src, 'other', 'memory.md'), 'other doc\n');
    fx = openRecall();
    expect((await fx.recall.importDemoFolder(src, { users: ['other'] })).users).toEqual(['other']);
    expect(await fx.recall.listSessions('demo-user')).toEqual([]);
    await expect(fx.recall.importDemoFolder(src, { users: ['missing'] })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(fx.recall.exportDemoFolder(join(work, 'x'), { users: ['a\nb'] })).rejects.toMatchObject({ code: 'invalid_id' });
  });

  it('importing named users ignores the other folders, even ones Mnemo cannot take', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    mkdirSync(join(src, 'bad%2fname'));
    mkdirSync(join(src, 'trailing '));
    symlinkSync(join(work, 'nowhere'), join(src, 'linked'));
    fx = openRecall();
    const report = await fx.recall.importDemoFolder(src, { users: ['demo-user'] });
    expect(report.users).toEqual(['demo-user']);
    expect((await fx.recall.listSessions('demo-user')).map((c) => c.sessionId)).toEqual(['s1', 's2']);
  });
});

describe('ids as folder names', () => {
  it('export without users writes every user, also one whose id starts with another user id', async () => {
    fx = openRecall();
    for (const u of ['alice', 'alice2', 'alice-b', 'bob']) await fx.recall.chat({ userId: u, sessionId: 's', message: `I am ${u}` });
    const out = join(work, 'exported');
    const report = await fx.recall.exportDemoFolder(out);
    expect(report.users).toEqual(['alice', 'alice-b', 'alice2', 'bob']);
    expect(readdirSync(out).sort()).toEqual(['alice', 'alice-b', 'alice2', 'bob']);
  });

  it('a demo folder of several users (prefixes, Chinese, dotted, email) round-trips byte for byte', async () => {
    const src = join(work, 'memory');
    writeDemoFolder(src);
    for (const u of ['demo-user2', '张三', 'alice.smith', 'bob@example.com', 'a b']) {
      put(join(src, u, 'memory.md'), `${u} 的记忆\n`);
      put(join(src, u, 'sessions', '会话.jsonl'), jsonl([row('2026-04-08T10:00:00', 'user', `你好 ${u}`, 'session', { message_id: 1 })]));
      put(join(src, u, 'conversations.json'), pythonJsonDumps({ 会话: { title: '你好', updated_at: '2026-04-08T10:00:00' } }, 2));
    }
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    const out = join(work, 'exported');
    await fx.recall.exportDemoFolder(out);
    expect(filesUnder(out)).toEqual(filesUnder(src));
  });

  it('a demo folder with Chinese user and session ids imports and chats', async () => {
    const src = join(work, 'memory');
    put(join(src, '张三', 'sessions', '生日.jsonl'), jsonl([row('2026-04-08T10:00:00', 'user', '我的生日是五月三号', 'session', { message_id: 1 }), row('2026-04-08T10:00:01', 'assistant', '记住了', 'session', { message_id: 2 })]));
    put(join(src, '张三', 'conversations.json'), pythonJsonDumps({ 生日: { title: '生日', updated_at: '2026-04-08T10:00:01' } }, 2));
    fx = openRecall();
    expect((await fx.recall.importDemoFolder(src)).users).toEqual(['张三']);
    const result = await fx.recall.chat({ userId: '张三', sessionId: '生日', message: '还记得吗' });
    expect(result.title).toBe('生日');
    expect((await fx.recall.getSessionMessages('张三', '生日')).map((m) => [m.messageId, m.content])).toEqual([
      [1, '我的生日是五月三号'],
      [2, '记住了'],
      [3, '还记得吗'],
      [4, result.reply],
    ]);
    expect(await fx.recall.listSessions('张三')).toHaveLength(1);
  });

  it('ids with .., / and \\ are encoded on export, never reach the file system as such, and import back', async () => {
    fx = openRecall();
    // `..` itself is no id (URLs drop it): `...` is.
    const pairs: [string, string][] = [['...', '../../escape'], ['a/b', 'c\\d'], ['.hidden', '50%']];
    for (const [u, s] of pairs) await fx.recall.chat({ userId: u, sessionId: s, message: `${u} ${s}` });
    const out = join(work, 'exported');
    await fx.recall.exportDemoFolder(out);
    expect(readdirSync(out).sort()).toEqual(['%2E..', '%2Ehidden', 'a%2Fb']);
    expect(readdirSync(join(out, '%2E..', 'sessions'))).toEqual(['%2E.%2F..%2Fescape.jsonl']);
    expect(readdirSync(join(out, 'a%2Fb', 'sessions'))).toEqual(['c%5Cd.jsonl']);
    expect(readdirSync(work).sort()).toEqual(['exported']);
    const again = openRecall();
    try {
      await again.recall.importDemoFolder(out);
      for (const [u, s] of pairs) {
        expect((await again.recall.getSessionMessages(u, s)).map((m) => m.content)[0]).toBe(`${u} ${s}`);
      }
    } finally {
      await again.close();
    }
  });

  it('an id too long for a file name is refused on export before anything is written', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'u', sessionId: '长'.repeat(100), message: 'x' });
    const out = join(work, 'exported');
    await expect(fx.recall.exportDemoFolder(out)).rejects.toMatchObject({ code: 'invalid_id' });
    expect(readdirSync(work)).toEqual([]);
  });

  it('users a/b and a keep their sessions apart (a/b + c is not a + b/c)', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'a/b', sessionId: 'c', message: 'from a/b' });
    await fx.recall.chat({ userId: 'a', sessionId: 'b/c', message: 'from a' });
    expect((await fx.recall.getSessionMessages('a/b', 'c')).map((m) => m.content)[0]).toBe('from a/b');
    expect(await fx.recall.getSessionMessages('a/b', 'c')).toHaveLength(2);
    expect((await fx.recall.getSessionMessages('a', 'b/c')).map((m) => m.content)[0]).toBe('from a');
    expect(await fx.recall.getSessionMessages('a', 'b/c')).toHaveLength(2);
  });
});

describe('ranked search over an imported folder', () => {
  /** Session `bike` has no daily file; session `tea`'s rows are in its day's daily file too (as the demo writes them). */
  function writeFolder(root: string): void {
    const u = join(root, 'u');
    put(join(u, 'conversations.json'), pythonJsonDumps({ bike: { title: 'bike', updated_at: '2026-04-06T10:00:01' }, tea: { title: 'tea', updated_at: '2026-04-08T09:00:01' } }, 2));
    put(
      join(u, 'sessions', 'bike.jsonl'),
      jsonl([
        row('2026-04-06T10:00:00', 'user', 'I left the blue bicycle at the ferry terminal', 'session', { message_id: 1 }),
        {
          ts: '2026-04-06T10:00:01',
          role: 'assistant',
          content: 'Noted where the bicycle is',
          tags: ['session'],
          meta: { tool_calls: [{ name: 'remember_note', input: '{"note": "bicycle at the ferry"}', output: 'ok' }] },
          message_id: 2,
        },
        row('t3', 'user', 'a pannier on the bicycle too', 'session', { message_id: 3 }),
      ]),
    );
    put(
      join(u, 'sessions', 'tea.jsonl'),
      jsonl([
        row('2026-04-08T09:00:00', 'user', 'oolong tea every morning', 'session', { message_id: 1 }),
        row('2026-04-08T09:00:01', 'assistant', 'oolong noted', 'session', { message_id: 2 }),
      ]),
    );
    put(
      join(u, 'daily', '2026-04-08.jsonl'),
      jsonl([
        row('2026-04-08T09:00:00', 'user', 'oolong tea every morning', 'daily', { message_id: 1 }),
        row('2026-04-08T09:00:01', 'assistant', 'oolong noted', 'daily', { message_id: 2 }),
      ]),
    );
  }
  const brief = (hits: { sessionId: string | null; messageId: number; source: string }[]) => hits.map((h) => [h.source, h.sessionId, h.messageId]);

  it('finds the rows of a session imported without daily files, and a row held by both views once', async () => {
    const src = join(work, 'memory');
    writeFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    const r = fx.recall;
    const bike = (await r.search({ userId: 'u', query: 'bicycle' })).items;
    expect(brief(bike).sort()).toEqual([
      ['session', 'bike', 1],
      ['session', 'bike', 2],
      ['session', 'bike', 3],
    ]);
    expect(bike.find((h) => h.messageId === 1)).toMatchObject({ day: '2026-04-06', role: 'user', ts: '2026-04-06T10:00:00' });
    expect(bike.find((h) => h.messageId === 1)!.dailyMessageId).toBeUndefined();
    // The filters apply: session, day, role, tool.
    expect(brief((await r.search({ userId: 'u', query: 'bicycle', day: '2026-04-06', roles: ['assistant'] })).items)).toEqual([['session', 'bike', 2]]);
    expect(brief((await r.search({ userId: 'u', query: 'bicycle', tool: 'remember_note' })).items)).toEqual([['session', 'bike', 2]]);
    expect((await r.search({ userId: 'u', query: 'bicycle', sessionId: 'tea' })).items).toEqual([]);
    // The tea rows are in the daily view: found through it, not twice.
    expect(brief((await r.search({ userId: 'u', query: 'oolong' })).items).sort()).toEqual([
      ['daily', null, 1],
      ['daily', null, 2],
    ]);
    // The index rebuilt from the rows finds them the same; the daily view and the export are the folder's.
    const before = (await r.search({ userId: 'u', query: 'bicycle ferry' })).items;
    await r.rebuildSearchIndex('u');
    expect((await r.search({ userId: 'u', query: 'bicycle ferry' })).items).toEqual(before);
    expect(await r.dailyMessages('u', '2026-04-06')).toEqual([]);
    const out = join(work, 'out');
    await r.exportDemoFolder(out);
    expect(filesUnder(join(out, 'u'))).toEqual(filesUnder(join(src, 'u')));
    // A pooled query reads the same documents (LMDB's search pool).
    if (!onPostgres) {
      const pool = createSearchPool({ maxThreads: 1 });
      const pooled = openRecall({ dir: fx.dir, pool, rankPoolThreshold: 0 });
      try {
        expect((await pooled.recall.search({ userId: 'u', query: 'bicycle ferry' })).items).toEqual(before);
      } finally {
        await pooled.recall.close();
        await pool.close();
        await pooled.close();
      }
    }
    // Deleting the session takes its documents along.
    await r.deleteSession('u', 'bike');
    expect((await r.search({ userId: 'u', query: 'bicycle' })).items).toEqual([]);
    expect(brief((await r.search({ userId: 'u', query: 'oolong' })).items).length).toBe(2);
  });

  // LMDB's: its index's pending log and statistics.
  itLmdb('an imported user is indexed in bulk at the end of the import, not row by row through the pending log', async () => {
    const src = join(work, 'memory');
    writeFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    const dbs = openRecallDbs(fx.env);
    // Live, all five documents (3 session documents, 2 daily rows) in the posting lists.
    expect(isLive(dbs.search, 'u')).toBe(true);
    expect(readStats(dbs.search, 'u')).toEqual([5, expect.any(Number), 0]);
    expect(brief((await fx.recall.search({ userId: 'u', query: 'bicycle' })).items)).toHaveLength(3);
  });

  it('erasing the user erases their session documents', async () => {
    const src = join(work, 'memory');
    writeFolder(src);
    fx = openRecall();
    await fx.recall.importDemoFolder(src);
    // The session documents as LMDB keeps them (PostgreSQL's erasure is checked table by table in test/postgres).
    const meta = onPostgres ? undefined : fx.env.root.openDB(SEARCH_DB_NAMES.meta, { encoding: 'json' });
    const keys = () => [...(meta?.getKeys({ start: ['u'], end: ['u', HIGH] }) ?? [])].filter((k) => Array.isArray(k) && k[1] === SESSION_DOC);
    if (!onPostgres) expect(keys().length).toBe(3);
    expect(brief((await fx.recall.search({ userId: 'u', query: 'bicycle' })).items)).toHaveLength(3);
    await fx.recall.eraseUser('u');
    expect(keys()).toEqual([]);
    expect((await fx.recall.search({ userId: 'u', query: 'bicycle' })).items).toEqual([]);
    expect(await fx.store.hasData('u')).toBe(false);
  });
});
