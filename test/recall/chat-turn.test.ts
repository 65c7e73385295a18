import { afterEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../src/llm/llm-errors.ts';
import { FACT_TOOL_NAMES, MEMORY_TOOL_NAMES } from '../../src/recall/index.ts';
import { itLmdb, openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { callsTools, says, scriptedLlm, toolCall } from '../support/scripted-llm.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'demo-user';

describe('offline turn (no LLM configured)', () => {
  it("the demo's observed sequence: empty message, then 中文 flips the reply while it is in the last 6 rows", async () => {
    fx = openRecall();
    const chat = (message: string) => fx!.recall.chat({ userId: U, sessionId: 's', message });
    expect(await chat('')).toEqual({ reply: '收到：。我已经记录到记忆中。', memoryHits: 0, title: '新对话', toolCalls: [] });
    expect((await chat('请用中文 hello')).reply).toBe('收到：请用中文 hello。我会继续用中文回答。');
    const third = await chat('second');
    expect(third.reply).toBe('收到：second。我会继续用中文回答。');
    expect(third.title).toBe('新对话');
  });

  itLmdb('a turn is two LMDB commits: the user row with its daily row and in-flight mark, then the reply with the rest', async () => {
    fx = openRecall();
    const txn = () => (fx!.env.root.getStats() as { lastTxnId: number }).lastTxnId;
    await fx.recall.chat({ userId: U, sessionId: 'other', message: 'warm up' });
    for (const message of ['first turn of s', 'a later turn']) {
      const before = txn();
      await fx.recall.chat({ userId: U, sessionId: 's', message });
      expect(txn() - before, message).toBe(2);
    }
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => r.content)).toEqual(['first turn of s', '收到：first turn of s。我已经记录到记忆中。', 'a later turn', expect.any(String)]);
    expect((await fx.recall.listSessions(U)).map((s) => s.title)).toContain('first turn o');
  });

  it('"language" in the context flips it too, case-insensitively', async () => {
    fx = openRecall();
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: 'My LANGUAGE is Go' })).reply).toBe(
      '收到：My LANGUAGE is Go。我会继续用中文回答。',
    );
  });

  it('memoryHits is 1 when the long-term document is non-empty, and the document is in the context', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'likes tea');
    const result = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hi' });
    expect(result.memoryHits).toBe(1);
    const [log] = await fx.recall.dialogueLog(U);
    expect(log!.memoryContext).toBe('[SESSION]\nuser: hi\n[LONG_TERM]\nlikes tea');
  });

  it('the context holds the last 6 session rows, the current message included', async () => {
    fx = openRecall();
    for (const m of ['u1', 'u2', 'u3', 'u4']) await fx.recall.chat({ userId: U, sessionId: 's', message: m });
    const log = await fx.recall.dialogueLog(U, 's');
    const context = log[3]!.memoryContext;
    expect(context.split('\n')).toHaveLength(7);
    expect(context).toContain('user: u4');
    expect(context).toContain('user: u2');
    expect(context).not.toContain('user: u1');
  });

  it('user and reply rows land in the session, in order, with contiguous anchors', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'one' });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'two' });
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => [r.messageId, r.role, r.content])).toEqual([
      [1, 'user', 'one'],
      [2, 'assistant', '收到：one。我已经记录到记忆中。'],
      [3, 'user', 'two'],
      [4, 'assistant', '收到：two。我已经记录到记忆中。'],
    ]);
    expect(rows.every((r) => r.ts === '2026-04-08T10:00:00' && r.toolCalls.length === 0)).toBe(true);
  });

  it('every daily row names its session; anchors restart at 1 each local day', async () => {
    fx = openRecall();
    fx.clock.set('2026-04-08T23:59:58+08:00');
    await fx.recall.chat({ userId: U, sessionId: 'a', message: 'late' });
    fx.clock.set('2026-04-09T00:00:05+08:00');
    await fx.recall.chat({ userId: U, sessionId: 'b', message: 'early' });
    const yesterday = await fx.recall.dailyMessages(U, '2026-04-08');
    const today = await fx.recall.dailyMessages(U);
    expect(yesterday.map((r) => [r.messageId, r.sessionId, r.content.slice(0, 6)])).toEqual([
      [1, 'a', 'late'],
      [2, 'a', '收到：lat'],
    ]);
    expect(today.map((r) => [r.messageId, r.sessionId, r.day])).toEqual([
      [1, 'b', '2026-04-09'],
      [2, 'b', '2026-04-09'],
    ]);
    expect(today[0]!.ts).toBe('2026-04-09T00:00:05');
  });

  it('one dialogue-log row per turn: message, reply, exact context, tool calls', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello' });
    expect(await fx.recall.dialogueLog(U)).toEqual([
      {
        ts: '2026-04-08T10:00:00',
        sessionId: 's',
        userMessage: 'hello',
        assistantReply: '收到：hello。我已经记录到记忆中。',
        memoryContext: '[SESSION]\nuser: hello',
        toolCalls: [],
      },
    ]);
  });

  it('a message that is not a string is refused with invalid_message and nothing is stored', async () => {
    fx = openRecall();
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 123 as unknown as string })).rejects.toMatchObject({
      code: 'invalid_message',
    });
    expect(await fx.recall.getSessionMessages(U, 's')).toEqual([]);
    expect(await fx.recall.listSessions(U)).toEqual([]);
  });
});

describe('titles and the sessions index', () => {
  it('the title is made once, from the first turn, and never changes', async () => {
    fx = openRecall();
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: '  帮我记住我的生日是五月三号好吗  ' })).title).toBe('帮我记住我的生日是五月三');
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: 'something else' })).title).toBe('帮我记住我的生日是五月三');
  });

  it('with a model, the title is asked of it; the answer is cut to 12 code points', async () => {
    const llm = scriptedLlm([says('the reply'), says('生日提醒')]);
    fx = openRecall({ llm });
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: 'my birthday' })).title).toBe('生日提醒');
  });

  it('with a model whose title call fails, the offline title is used', async () => {
    const llm = scriptedLlm([says('the reply'), new LlmError('llm_unavailable', 'down')]);
    fx = openRecall({ llm });
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: 'my birthday' })).title).toBe('my birthday');
  });

  it('updated_at is refreshed by every turn; the list is newest first', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 'old', message: 'a' });
    fx.clock.advance(60_000);
    await fx.recall.chat({ userId: U, sessionId: 'new', message: 'b' });
    expect((await fx.recall.listSessions(U)).map((c) => c.sessionId)).toEqual(['new', 'old']);
    fx.clock.advance(60_000);
    await fx.recall.chat({ userId: U, sessionId: 'old', message: 'c' });
    expect(await fx.recall.listSessions(U)).toEqual([
      { sessionId: 'old', title: 'a', updatedAt: '2026-04-08T10:02:00' },
      { sessionId: 'new', title: 'b', updatedAt: '2026-04-08T10:01:00' },
    ]);
  });

  it('sessions updated in the same second list in creation order', async () => {
    fx = openRecall();
    for (const s of ['a', 'b', 'c']) await fx.recall.chat({ userId: U, sessionId: s, message: s });
    await fx.recall.chat({ userId: U, sessionId: 'a', message: 'again' });
    expect((await fx.recall.listSessions(U)).map((c) => c.sessionId)).toEqual(['a', 'b', 'c']);
  });

  it('a created conversation is not listed until its first chat', async () => {
    fx = openRecall();
    const id = await fx.recall.createSession(U);
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(await fx.recall.listSessions(U)).toEqual([]);
    await fx.recall.chat({ userId: U, sessionId: id, message: 'hi' });
    expect((await fx.recall.listSessions(U)).map((c) => c.sessionId)).toEqual([id]);
  });
});

describe('turn with a model and the memory tools', () => {
  it('the agent gets the system prompt with the context, the message, the six tools and search_memory', async () => {
    const llm = scriptedLlm([says('fine')]);
    fx = openRecall({ llm });
    await fx.recall.setLongTerm(U, 'likes tea');
    const result = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hi' });
    expect(result).toEqual({ reply: 'fine', memoryHits: 1, title: 'hi', toolCalls: [] });
    const first = llm.calls[0]!;
    expect(first.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first.messages[0]!.content).toContain('可用记忆上下文:\n[SESSION]\nuser: hi\n[LONG_TERM]\nlikes tea');
    expect(first.messages[1]!.content).toBe('hi');
    expect(first.options?.tools?.map((t) => t.name)).toEqual([...MEMORY_TOOL_NAMES, ...FACT_TOOL_NAMES, 'search_memory']);
  });

  it('tool calls are the real transcript, paired by id, returned and replayed with the reply', async () => {
    const llm = scriptedLlm([
      says('记住了'),
      says('title'),
      callsTools(toolCall('c1', 'search_session', { keyword: '生日' }), toolCall('c2', 'search_session', { keyword: 'nothing-here' })),
      says('你的生日是五月三号'),
    ]);
    fx = openRecall({ llm });
    await fx.recall.chat({ userId: U, sessionId: 's', message: '我的生日是五月三号' });
    const result = await fx.recall.chat({ userId: U, sessionId: 's', message: '我生日是哪天？' });
    const expected = [
      { name: 'search_session', input: '{"keyword": "生日"}', output: '#1 2026-04-08T10:00:00 | user: 我的生日是五月三号\n#3 2026-04-08T10:00:00 | user: 我生日是哪天？' },
      { name: 'search_session', input: '{"keyword": "nothing-here"}', output: 'no matched session messages' },
    ];
    expect(result.reply).toBe('你的生日是五月三号');
    expect(result.toolCalls).toEqual(expected);

    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => r.messageId)).toEqual([1, 2, 3, 4]);
    expect(rows[3]!.toolCalls).toEqual(expected);
    expect((await fx.recall.dailyMessages(U)).at(-1)!.toolCalls).toEqual(expected);
    expect((await fx.recall.dialogueLog(U)).at(-1)!.toolCalls).toEqual(expected);

    const stored = await fx.memory.range('session/demo-user/s', { from: 4, to: 4 });
    const transcript = stored[0]!.meta['transcript'] as { role: string; tool_call_id?: string }[];
    expect(transcript.map((m) => [m.role, m.tool_call_id])).toEqual([
      ['assistant', undefined],
      ['tool', 'c1'],
      ['tool', 'c2'],
    ]);
  });

  it('remember_note from the model replaces the long-term document', async () => {
    const llm = scriptedLlm([callsTools(toolCall('n', 'remember_note', { note: '用户喜欢喝茶' })), says('好的'), says('t')]);
    fx = openRecall({ llm });
    const result = await fx.recall.chat({ userId: U, sessionId: 's', message: '我喜欢喝茶' });
    expect(result.toolCalls).toEqual([{ name: 'remember_note', input: '{"note": "用户喜欢喝茶"}', output: 'stored' }]);
    expect(await fx.recall.getLongTerm(U)).toBe('用户喜欢喝茶');
  });
});

describe('a failing turn', () => {
  it('the error is rethrown and an assistant error row takes the reply place: no orphan user row', async () => {
    const llm = scriptedLlm([new LlmError('llm_unavailable', 'upstream down')]);
    fx = openRecall({ llm });
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'hello there' })).rejects.toMatchObject({ code: 'llm_unavailable' });
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows).toEqual([
      { ts: '2026-04-08T10:00:00', role: 'user', content: 'hello there', messageId: 1, toolCalls: [] },
      {
        ts: '2026-04-08T10:00:00',
        role: 'assistant',
        content: '',
        messageId: 2,
        toolCalls: [],
        // The code's own sentence: the provider's words are not stored.
        error: { code: 'llm_unavailable', message: 'the model provider is unavailable; try again later' },
      },
    ]);
    expect((await fx.recall.dailyMessages(U)).map((r) => [r.role, r.error?.code])).toEqual([
      ['user', undefined],
      ['assistant', 'llm_unavailable'],
    ]);
    const [log] = await fx.recall.dialogueLog(U);
    expect(log).toMatchObject({ userMessage: 'hello there', assistantReply: '', error: { code: 'llm_unavailable' } });
    expect(log!.memoryContext).toBe('[SESSION]\nuser: hello there');
    expect(await fx.recall.listSessions(U)).toEqual([{ sessionId: 's', title: 'hello there', updatedAt: '2026-04-08T10:00:00' }]);
  });

  it('a turn that runs out of tool iterations keeps the calls it made on the error row', async () => {
    const loop = callsTools(toolCall('x', 'get_recent_session', { rounds: 1 }));
    const llm = scriptedLlm([loop, loop]);
    fx = openRecall({ llm, maxToolIterations: 2 });
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'loop' })).rejects.toMatchObject({ code: 'max_tool_iterations' });
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows[1]!.error?.code).toBe('max_tool_iterations');
    expect(rows[1]!.toolCalls.map((c) => c.name)).toEqual(['get_recent_session', 'get_recent_session']);
    expect(rows[1]!.toolCalls[0]!.output).toBe('#1 2026-04-08T10:00:00 | user: loop');
  });

  it('the next turn after failures works and leaves the failed turns out of its context', async () => {
    const llm = scriptedLlm([new Error('boom'), new Error('boom'), says('ok now'), says('t'), says('fine')]);
    fx = openRecall({ llm });
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'first' })).rejects.toThrow('boom');
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'first' })).rejects.toThrow('boom');
    expect((await fx.recall.chat({ userId: U, sessionId: 's', message: 'first' })).reply).toBe('ok now');
    expect((await fx.recall.getSessionMessages(U, 's')).map((r) => r.messageId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await fx.recall.dialogueLog(U)).at(-1)!.memoryContext).toBe('[SESSION]\nuser: first');
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'then' });
    expect((await fx.recall.dialogueLog(U)).at(-1)!.memoryContext).toBe('[SESSION]\nuser: first\nassistant: ok now\nuser: then');
  });
});
