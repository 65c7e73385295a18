import { afterEach, describe, expect, it } from 'vitest';
import { fallbackLlm, fallbackReply } from '../../src/llm/fallback-llm.ts';
import { buildSystemPrompt } from '../../src/recall/chat/system-prompt.ts';
import { generateTitle, offlineTitle } from '../../src/recall/rows/session-title.ts';
import { itLmdb, openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { says, scriptedLlm } from '../support/scripted-llm.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmService } from '../../src/llm/llm-service.ts';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';

// The `language` setting: 'zh' (the default) keeps every Demo text; 'en' writes the same
// rules, titles and offline replies in English.

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const TOOL_NAMES = ['remember_note', 'search_session', 'search_daily', 'get_session_window', 'get_daily_window', 'message_id'];

describe('the English texts', () => {
  it('the English system prompt names the same tools and anchors, then the context under its own heading', () => {
    const prompt = buildSystemPrompt('[LONG_TERM]\nctx', 'en');
    for (const name of TOOL_NAMES) expect(prompt).toContain(name);
    expect(prompt).toMatch(/complete version of long-term memory, not an incremental patch/);
    expect(prompt.endsWith('\n\nAvailable memory context:\n[LONG_TERM]\nctx')).toBe(true);
    expect(prompt).not.toMatch(/[\u4e00-\u9fff]/u);
  });

  it('the default prompt is the Chinese one', () => {
    expect(buildSystemPrompt('x')).toBe(buildSystemPrompt('x', 'zh'));
  });

  it('neither prompt flips the offline fallback of either language', async () => {
    for (const language of ['zh', 'en'] as const) {
      const content = buildSystemPrompt('', language);
      expect((await fallbackLlm().chat([{ role: 'system', content }, { role: 'user', content: 'hi' }])).content).toBe('收到：hi。我已经记录到记忆中。');
      expect((await fallbackLlm({ language: 'en' }).chat([{ role: 'system', content }, { role: 'user', content: 'hi' }])).content).toBe(
        'Got it: hi. I have saved it to memory.',
      );
    }
  });

  it('the English fallback streams the English reply too, and the English prompt names search_memory', async () => {
    let streamed = '';
    let done = '';
    for await (const event of fallbackLlm({ language: 'en' }).stream!([{ role: 'user', content: 'hi' }])) {
      if (event.type === 'text') streamed += event.delta;
      else if (event.type === 'done') done = String(event.response.content);
    }
    expect(streamed).toBe('Got it: hi. I have saved it to memory.');
    expect(done).toBe(streamed);
    expect(buildSystemPrompt('', 'en')).toContain('search_memory');
    expect(buildSystemPrompt('', 'zh')).toContain('search_memory');
  });

  it('the English offline reply promises English when the context mentions "language" or "English", in any case', () => {
    expect(fallbackReply('hi', 'user: hi', 'en')).toBe('Got it: hi. I have saved it to memory.');
    expect(fallbackReply('hi', 'Reply in ENGLISH please', 'en')).toBe('Got it: hi. I will keep answering in English.');
    expect(fallbackReply('hi', 'my Language is Go', 'en')).toBe('Got it: hi. I will keep answering in English.');
    expect(fallbackReply('hi', 'Reply in ENGLISH please')).toBe('收到：hi。我已经记录到记忆中。');
  });

  it('English offline titles are the first words within 40 code points, cut at a word boundary, and "New chat" when blank', () => {
    expect(offlineTitle('  Plan a weekend hike in the Fragrant Hills near Beijing  ', 'en')).toBe('Plan a weekend hike in the Fragrant');
    expect(offlineTitle('Hi! I like espresso and keep a small machine', 'en')).toBe('Hi! I like espresso and keep a small');
    // Whole when it fits; a space just past the 40th code point still ends the phrase there.
    expect(offlineTitle('Hi! I like espresso and keep a small', 'en')).toBe('Hi! I like espresso and keep a small');
    expect(offlineTitle(`${'a'.repeat(40)} tail`, 'en')).toBe('a'.repeat(40));
    // Line breaks and runs of spaces are single spaces; a cut drops a trailing comma or dash.
    expect(offlineTitle('Hello there,\n\nI want to plan a trip, maybe, to Lisbon soon', 'en')).toBe('Hello there, I want to plan a trip');
    expect(offlineTitle('one word that is far too long: antidisestablishmentarianism', 'en')).toBe('one word that is far too long');
    expect(offlineTitle(`${'x'.repeat(60)}`, 'en')).toBe('x'.repeat(40));
    expect(offlineTitle('😀 '.repeat(30), 'en')).toBe('😀 '.repeat(20).trim());
    expect(offlineTitle('   ', 'en')).toBe('New chat');
    expect(offlineTitle('   ')).toBe('新对话');
  });

  it('Chinese titles stay the Demo’s 12-code-point cut, English or not', () => {
    expect(offlineTitle('Hi! I like espresso and keep a small machine')).toBe('Hi! I like e');
    expect(offlineTitle('我喜欢手冲咖啡，家里有一台小咖啡机和磨豆机')).toBe('我喜欢手冲咖啡，家里有一');
  });

  it('a model’s English title is cut at a word boundary too', async () => {
    const llm = scriptedLlm([says('A long title about espresso machines and grinders at home')]);
    expect(await generateTitle(llm, 'msg', 'reply', undefined, 'en')).toBe('A long title about espresso machines and');
  });

  it('an English title is asked for in English, at temperature 0', async () => {
    const llm = scriptedLlm([says('  Weekend hike\nplan ')]);
    expect(await generateTitle(llm, 'msg', 'reply', undefined, 'en')).toBe('Weekend hikeplan');
    const prompt = String(llm.calls[0]!.messages[0]!.content);
    expect(prompt).toMatch(/^Give the conversation below a short title/);
    expect(prompt).toContain('User: msg\nAssistant: reply');
    expect(llm.calls[0]!.options?.temperature).toBe(0);
  });
});

describe('a recall service with a language', () => {
  it('offline in English: English replies and titles', async () => {
    fx = openRecall({ language: 'en' });
    const chat = (message: string) => fx!.recall.chat({ userId: 'u', sessionId: 's', message });
    expect(await chat('')).toEqual({ reply: 'Got it: . I have saved it to memory.', memoryHits: 0, title: 'New chat', toolCalls: [] });
    expect((await chat('answer in English')).reply).toBe('Got it: answer in English. I will keep answering in English.');
  });

  it('by default: the Demo’s Chinese replies and titles', async () => {
    fx = openRecall();
    expect(await fx.recall.chat({ userId: 'u', sessionId: 's', message: '' })).toEqual({
      reply: '收到：。我已经记录到记忆中。',
      memoryHits: 0,
      title: '新对话',
      toolCalls: [],
    });
  });

  it('with a model in English: the agent gets the English system prompt', async () => {
    const llm = scriptedLlm([says('Hello!'), says('Greeting')]);
    fx = openRecall({ language: 'en', llm });
    const result = await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'hi' });
    expect(result).toMatchObject({ reply: 'Hello!', title: 'Greeting' });
    const system = llm.calls[0]!.messages[0]!;
    expect(system.role).toBe('system');
    expect(String(system.content)).toMatch(/^You are an assistant with layered memory\./);
    expect(String(llm.calls[1]!.messages[0]!.content)).toMatch(/^Give the conversation below a short title/);
  });

  it("'auto' offline: each turn in its message's language; a message saying 中文 switches to Chinese while it is in the context, as in the Demo", async () => {
    fx = openRecall({ language: 'auto' });
    const chat = (sessionId: string, message: string) => fx!.recall.chat({ userId: 'u', sessionId, message });
    expect(await chat('en', 'Hi! I like espresso and keep a small machine')).toEqual({
      reply: 'Got it: Hi! I like espresso and keep a small machine. I have saved it to memory.',
      memoryHits: 0,
      title: 'Hi! I like espresso and keep a small',
      toolCalls: [],
    });
    expect(await chat('zh', '我喜欢手冲咖啡，家里有一台小咖啡机')).toMatchObject({ reply: '收到：我喜欢手冲咖啡，家里有一台小咖啡机。我已经记录到记忆中。', title: '我喜欢手冲咖啡，家里有一' });
    expect((await chat('sw', 'please answer in 中文 from now on')).reply).toBe('收到：please answer in 中文 from now on。我会继续用中文回答。');
    expect((await chat('sw', 'thanks')).reply).toBe('收到：thanks。我会继续用中文回答。');
    expect((await chat('sw', 'and one more')).reply).toBe('收到：and one more。我会继续用中文回答。');
    // Each Chinese reply says 中文 itself, so the session stays Chinese, as the Demo's does.
    expect((await chat('sw', 'hello')).reply).toBe('收到：hello。我会继续用中文回答。');
    expect((await chat('other', 'hello')).reply).toBe('Got it: hello. I have saved it to memory.');
    expect((await chat('blank', '')).title).toBe('New chat');
    expect((await fx.recall.listSessions('u')).map((c) => c.title)).toContain('please answer in 中文 from now on'.slice(0, 12));
  });

  it("'auto' with a model: the system prompt, the title prompt and Mnemo's tool texts follow the message", async () => {
    const llm = scriptedLlm([says('Hello!'), says('Greeting'), says('你好！'), says('问候')]);
    fx = openRecall({ language: 'auto', llm });
    await fx.recall.chat({ userId: 'u', sessionId: 'a', message: 'hi there' });
    await fx.recall.chat({ userId: 'u', sessionId: 'b', message: '你好' });
    expect(String(llm.calls[0]!.messages[0]!.content)).toMatch(/^You are an assistant with layered memory\./);
    expect(String(llm.calls[1]!.messages[0]!.content)).toMatch(/^Give the conversation below a short title/);
    expect(String(llm.calls[2]!.messages[0]!.content)).toMatch(/^你是一个拥有分层记忆的助手/);
    expect(String(llm.calls[3]!.messages[0]!.content)).toMatch(/^请为下面这段对话起一个简短的中文标题/);
    const described = (i: number) => (llm.calls[i]!.options?.tools ?? []).find((t) => t.name === 'search_memory')?.description ?? '';
    expect(CJK.test(described(0))).toBe(false);
    expect(CJK.test(described(2))).toBe(true);
  });

  it('refuses a language it does not have, with invalid_option', () => {
    expect(() => openRecall({ language: 'fr' as 'en' })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});

// The Demo's tool docstrings and empty answers (reference agent-memory-demo.md §5.3): the
// Demo's Chinese mode sent these English texts, so both languages keep them byte for byte.
const DEMO_TOOLS: Record<string, { description: string; empty: [Record<string, unknown>, string] | null }> = {
  remember_note: { description: 'Overwrite memory.md with the latest full-memory text. The input must be complete, not incremental.', empty: null },
  get_recent_session: { description: 'Fetch the latest session history by rounds (1 round ~= user+assistant messages).', empty: [{}, 'no session history'] },
  search_session: {
    description: 'Search session history by keyword and return message_id anchors for follow-up window lookups.',
    empty: [{ keyword: 'volcano' }, 'no matched session messages'],
  },
  get_session_window: {
    description: 'Fetch session messages around a message_id anchor. Use after search_session to expand context.',
    empty: [{ message_id: 99 }, 'no window messages'],
  },
  search_daily: {
    description: 'Search daily history by keyword. Optional day=YYYY-MM-DD; empty/invalid day falls back to all days.',
    empty: [{ keyword: 'volcano' }, 'no matched daily messages'],
  },
  get_daily_window: {
    description: 'Fetch daily messages around a message_id anchor. Use after search_daily to expand context.',
    empty: [{ message_id: 99 }, 'no window messages'],
  },
};

const CJK = /[\u4e00-\u9fff]/u;

describe('the tools in each language', () => {
  for (const language of ['zh', 'en'] as const) {
    it(`${language}: the Demo's six tools keep the Demo's descriptions and answers, byte for byte`, async () => {
      fx = openRecall({ language });
      const tools = fx.recall.memoryTools('u', 's');
      for (const [name, demo] of Object.entries(DEMO_TOOLS)) {
        const tool = tools.find((t) => t.name === name)!;
        expect(tool.description, name).toBe(demo.description);
        if (demo.empty) expect(await tool.execute(demo.empty[0] as never, {} as never), name).toBe(demo.empty[1]);
      }
      expect(await tools.find((t) => t.name === 'remember_note')!.execute({ note: 'likes tea' } as never, {} as never)).toBe('stored');
    });
  }

  it("Mnemo's own tools (remember, update_memory, forget, search_memory) speak the server language", async () => {
    fx = openRecall({ language: 'en' });
    const en = Object.fromEntries(fx.recall.memoryTools('u', 's').map((t) => [t.name, t]));
    await fx.close();
    fx = openRecall();
    const zh = Object.fromEntries(fx.recall.memoryTools('u', 's').map((t) => [t.name, t]));
    for (const name of ['remember', 'update_memory', 'forget', 'search_memory']) {
      expect(en[name]!.description, name).not.toMatch(CJK);
      expect(zh[name]!.description, name).toMatch(CJK);
      // Same arguments in both.
      expect(zh[name]!.parameters).toEqual(en[name]!.parameters);
    }
    expect(await zh['forget']!.execute({ id: 'm9' } as never, {} as never)).toBe('没有这条记忆');
  });
});

/** A facts model that answers each prompt as asked, recording the system prompts it was sent. */
function factsModel(): LlmService & { systems: string[] } {
  const systems: string[] = [];
  return {
    systems,
    async chat(messages) {
      const system = String(messages[0]!.content);
      systems.push(system);
      return { content: system.includes('"verdict"') ? '{"verdict": "new", "target": null}' : '{"facts": [{"text": "likes green tea"}]}' };
    },
  };
}

describe('the facts prompts in each language', () => {
  for (const [language, extraction, judge] of [
    ['zh', /^从这段对话中提取关于用户的长期事实/, /^你以简短事实的形式维护用户的长期记忆/],
    ['en', /^Extract durable facts about the user/, /^You maintain a user's long-term memory/],
  ] as const) {
    it(`${language}: extraction and the judge are asked in it`, async () => {
      const model = factsModel();
      fx = openRecall({ language, llm: scriptedLlm([], says('ok')), factsLlm: model });
      await fx.recall.remember('u', { text: 'likes tea' });
      await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'I like green tea' });
      await fx.recall.extractionIdle();
      expect(model.systems.some((p) => extraction.test(p))).toBe(true);
      expect(model.systems.some((p) => judge.test(p))).toBe(true);
      expect(model.systems.every((p) => (language === 'en' ? !CJK.test(p) : CJK.test(p)))).toBe(true);
    });
  }
});

describe('the summaries in each language', () => {
  const long = (i: number) => `turn ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}`;
  for (const [language, instruction, request] of [
    ['zh', /^你负责维护用户与助手之间一段长对话的滚动摘要.*最多约 40 个 token。$/su, /^之前的摘要：\n/],
    ['en', /^You maintain the running summary of a long conversation.*At most about 40 tokens\.$/su, /^Previous summary:\n/],
  ] as const) {
    it(`${language}: the summarizing model is asked in it`, async () => {
      const asked: string[][] = [];
      const summaryLlm: LlmService = {
        async chat(messages) {
          asked.push(messages.map((m) => String(m.content)));
          return { content: 'summary' };
        },
      };
      fx = openRecall({ language, summary: { keepLast: 1, maxTokens: 40, llm: summaryLlm } });
      for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: 'u', sessionId: 's', message: long(i) });
      await fx.recall.summaryIdle();
      expect(asked.length).toBeGreaterThan(0);
      expect(asked[0]![0]).toMatch(instruction);
      expect(asked[0]![1]).toMatch(request);
    });
  }

  it('offline, the extractive summary labels its lines in the language', async () => {
    // Which turns the last rolling summary still quotes depends on how the background jobs
    // batched them; its labels do not.
    for (const [language, label, other] of [['zh', /^用户：turn \d/mu, /^User:/mu], ['en', /^User: turn \d/mu, /^用户：/mu]] as const) {
      fx = openRecall({ language, summary: { keepLast: 1, maxTokens: 200 } });
      for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: 'u', sessionId: 's', message: long(i) });
      await fx.recall.summaryIdle();
      const text = (await fx.recall.summaries('u', 's')).at(-1)?.text ?? '';
      expect(text).toMatch(label);
      expect(text).not.toMatch(other);
      await fx.close();
      fx = undefined;
    }
  });
});

describe('the sessions index repair in each language', () => {
  for (const [language, long, blank] of [
    ['zh', 'Plan a weekend hike in the hills'.slice(0, 12), '新对话'],
    ['en', 'Plan a weekend hike in the hills', 'New chat'],
  ] as const) {
    // The cut is made in LMDB's databases (what a process killed inside the turn leaves there).
    itLmdb(`${language}: a session whose first turn was cut short is listed with the offline title in it`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mnemo-language-repair-'));
      try {
        fx = openRecall({ dir, language });
        await fx.recall.chat({ userId: 'u', sessionId: 'a', message: 'Plan a weekend hike in the hills' });
        await fx.recall.chat({ userId: 'u', sessionId: 'b', message: '' });
        // Back to what a process killed inside those first turns leaves: rows, no listing.
        const dbs = openRecallDbs({ root: fx.env.root, path: dir });
        await commit(dbs, () => {
          for (const s of ['a', 'b']) {
            dbs.sessions.put(['u', s], { ...dbs.sessions.get(['u', s])!, title: '', listed: false });
            dbs.counters.put(['\u0001first-turn', 'u', s], 0);
          }
        });
        await fx.close();
        fx = openRecall({ dir, language });
        const titles = Object.fromEntries((await fx.recall.listSessions('u')).map((c) => [c.sessionId, c.title]));
        expect(titles).toEqual({ a: long, b: blank });
      } finally {
        await fx?.close();
        fx = undefined;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
