import { afterEach, describe, expect, it } from 'vitest';
import { fallbackLlm, fallbackReply } from '../../src/llm/fallback-llm.ts';
import { buildSystemPrompt } from '../../src/recall/chat/system-prompt.ts';
import { generateTitle, offlineTitle } from '../../src/recall/store/session-title.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { says, scriptedLlm } from '../support/scripted-llm.ts';

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

  it('English offline titles keep up to 40 code points and say "New chat" when blank', () => {
    expect(offlineTitle('  Plan a weekend hike in the Fragrant Hills near Beijing  ', 'en')).toBe('Plan a weekend hike in the Fragrant Hill');
    expect(offlineTitle('   ', 'en')).toBe('New chat');
    expect(offlineTitle('   ')).toBe('新对话');
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

  it('refuses a language it does not have, with invalid_option', () => {
    expect(() => openRecall({ language: 'fr' as 'en' })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});
