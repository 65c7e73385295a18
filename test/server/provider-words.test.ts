import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { errorReply, startChatServer, type ChatServer } from '../support/chat-completions-stub.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// A model provider's own words (here a 401 naming the masked key) are never stored or served:
// a failed turn's row, a fact's judge_error and an extraction's last_error keep the code and
// Mnemo's own sentence; the provider's text reaches the server log and recall's onFactsError
// only. The provider is a real OpenAI-compatible endpoint on loopback refusing the key.

const PROVIDER_TEXT = 'Incorrect API key provided: sk-bad***abcd';
const SENTENCE = 'the model provider refused the API key';
const ADMIN = { authorization: 'Bearer admin-token-0123456789' };

let provider: ChatServer;
beforeAll(async () => {
  provider = await startChatServer(() => errorReply(401, PROVIDER_TEXT));
});
afterAll(async () => {
  await provider?.close();
});

const refusedKey = () => openAICompatible({ apiKey: 'sk-bad', baseURL: provider.baseURL, model: 'm', maxRetries: 0 });

describe('a model provider’s words', () => {
  let t: TestServer;
  const log: Record<string, unknown>[] = [];
  const told: { message: string; task: string }[] = [];
  beforeAll(async () => {
    t = await startTestServer({
      llm: refusedKey(),
      factsLlm: refusedKey(),
      adminToken: ADMIN.authorization.slice('Bearer '.length),
      logLines: log,
      onFactsError: (error, task) => told.push({ message: (error as Error).message, task }),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stay out of a failed turn’s stored row, and reach the server log', async () => {
    const chat = await t.request('POST', '/api/chat', { headers: ADMIN, body: { user_id: 'u', session_id: 's', message: 'hi' } });
    expect(chat.status).toBe(502);
    expect(chat.json).toEqual({ detail: SENTENCE, code: 'llm_auth' });
    const rows = await t.request('GET', '/api/conversations/s/messages?user_id=u', { headers: ADMIN });
    expect((rows.json as { items: { error?: unknown }[] }).items[1]!.error).toEqual({ code: 'llm_auth', message: SENTENCE });
    const daily = await t.request('GET', '/api/daily?user_id=u', { headers: ADMIN });
    for (const res of [chat, rows, daily]) expect(res.text).not.toMatch(/sk-bad|Incorrect API key/);
    expect(JSON.stringify(log)).toContain(PROVIDER_TEXT);
  });

  it('stay out of a fact’s judge_error, and reach onFactsError', async () => {
    const first = await t.request('POST', '/api/memory', { headers: ADMIN, body: { user_id: 'f', text: 'likes green tea' } });
    expect(first.status).toBe(200);
    // Similar, not a near-duplicate: the judge is asked, and the provider refuses the key.
    const second = await t.request('POST', '/api/memory', { headers: ADMIN, body: { user_id: 'f', text: 'drinks green tea every morning before work' } });
    expect(second.status).toBe(200);
    expect((second.json as { item: { verdict: unknown } }).item.verdict).toEqual({
      verdict: 'new',
      target: null,
      by: 'rules',
      judge_error: { code: 'llm_auth', message: SENTENCE },
    });
    const history = await t.request('GET', '/api/memory/history?user_id=f', { headers: ADMIN });
    for (const res of [second, history]) expect(res.text).not.toMatch(/sk-bad|Incorrect API key/);
    expect(told).toContainEqual({ message: `401 ${PROVIDER_TEXT}`, task: 'judge' });
  });
});

describe('a failed extraction job', () => {
  it('keeps the code and Mnemo’s sentence as last_error; the provider’s text reaches onFactsError', async () => {
    const told: { message: string; task: string }[] = [];
    const t = await startTestServer({
      llm: scriptedLlm([], text('noted')),
      factsLlm: refusedKey(),
      extraction: { maxAttempts: 1, backoffMs: 0 },
      adminToken: ADMIN.authorization.slice('Bearer '.length),
      onFactsError: (error, task) => told.push({ message: (error as Error).message, task }),
    });
    try {
      expect((await t.request('POST', '/api/chat', { headers: ADMIN, body: { user_id: 'x', session_id: 's', message: 'I like tea' } })).status).toBe(200);
      await t.recall.extractionIdle();
      const status = await t.request('GET', '/fact-extraction', { headers: ADMIN });
      expect((status.json as { dead_jobs: { last_error: unknown }[] }).dead_jobs.map((j) => j.last_error)).toEqual([{ code: 'llm_auth', message: SENTENCE }]);
      expect(status.text).not.toMatch(/sk-bad|Incorrect API key/);
      expect(told).toEqual([{ message: `401 ${PROVIDER_TEXT}`, task: 'extraction' }]);
    } finally {
      await t.close();
    }
  });
});
