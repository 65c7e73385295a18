import { describe, expect, it } from 'vitest';
import { fallbackLlm, fallbackReply, llmFromEnv } from '../../src/llm/index.ts';
import { completion, startChatServer } from '../support/chat-completions-stub.ts';

describe('fallbackLlm: the Agent Memory Demo offline reply', () => {
  it('records the message when the context has no language hint', async () => {
    const r = await fallbackLlm().chat([{ role: 'user', content: 'hello' }]);
    expect(r.content).toBe('收到：hello。我已经记录到记忆中。');
  });

  it('answers in Chinese when the context contains 中文', async () => {
    const r = await fallbackLlm().chat([
      { role: 'system', content: '[SESSION] user: 请用中文回答' },
      { role: 'user', content: 'second' },
    ]);
    expect(r.content).toBe('收到：second。我会继续用中文回答。');
  });

  it('answers in Chinese when the lowercased context contains "language"', async () => {
    const r = await fallbackLlm().chat([{ role: 'user', content: 'Switch LANGUAGE please' }]);
    expect(r.content).toBe('收到：Switch LANGUAGE please。我会继续用中文回答。');
  });

  it('sees a hint in earlier history messages, not only the system prompt', async () => {
    const r = await fallbackLlm().chat([
      { role: 'user', content: '请用中文 hello' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'next' },
    ]);
    expect(r.content).toBe('收到：next。我会继续用中文回答。');
  });

  it('uses the last user message as the message', async () => {
    const r = await fallbackLlm().chat([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: [{ type: 'text', text: 'last' }] },
    ]);
    expect(r.content).toBe('收到：last。我已经记录到记忆中。');
  });

  it('an empty message gives the demo’s empty reply', () => {
    expect(fallbackReply('', '')).toBe('收到：。我已经记录到记忆中。');
  });

  it('never calls a tool, even when tools are offered', async () => {
    const r = await fallbackLlm().chat([{ role: 'user', content: 'x' }], {
      tools: [{ name: 't', description: 'd', parameters: { type: 'object' } }],
    });
    expect(r.tool_calls).toBeUndefined();
    expect(r.finish_reason).toBe('stop');
  });
});

describe('llmFromEnv', () => {
  it('is the offline fallback without OPENAI_API_KEY, answering each message in its language', async () => {
    const llm = llmFromEnv({});
    expect((await llm.chat([{ role: 'user', content: '你好' }])).content).toBe('收到：你好。我已经记录到记忆中。');
    expect((await llm.chat([{ role: 'user', content: 'x' }])).content).toBe('Got it: x. I have saved it to memory.');
    // A message that ends a sentence gets no second period.
    expect((await llm.chat([{ role: 'user', content: 'What is my name?' }])).content).toBe('Got it: What is my name? I have saved it to memory.');
  });

  it('talks to OPENAI_BASE_URL with OPENAI_MODEL when OPENAI_API_KEY is set', async () => {
    const server = await startChatServer(() => completion({ content: 'from server' }));
    try {
      const llm = llmFromEnv({ OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'env-model' });
      expect((await llm.chat([{ role: 'user', content: 'x' }])).content).toBe('from server');
      expect(server.requests[0]?.body['model']).toBe('env-model');
      expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-env');
    } finally {
      await server.close();
    }
  });
});
