import { afterEach, describe, expect, it } from 'vitest';
import { LlmError, openAICompatible } from '../../src/llm/index.ts';
import type { Message } from '../../src/message.ts';
import { completion, errorReply, startChatServer, type ChatServer } from '../support/chat-completions-stub.ts';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const NO_WAIT = { 'retry-after-ms': '0' };

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

describe('openAICompatible over a real loopback chat-completions server', () => {
  it('sends model, messages and the bearer key, and maps a text answer', async () => {
    server = await startChatServer(() => completion({ content: 'hello there' }));
    const llm = openAICompatible({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'm-1' });
    const response = await llm.chat([{ role: 'user', content: 'hi' }]);
    expect(response).toEqual({
      content: 'hello there',
      finish_reason: 'stop',
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
    const [req] = server.requests;
    expect(req?.path).toBe('/v1/chat/completions');
    expect(req?.headers.authorization).toBe('Bearer sk-test');
    expect(req?.body['model']).toBe('m-1');
    expect(req?.body['messages']).toEqual([{ role: 'user', content: 'hi' }]);
    expect(req?.body['tools']).toBeUndefined();
  });

  it('advertises tools as function tools and maps tool calls back', async () => {
    server = await startChatServer(() =>
      completion(
        {
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
          ],
        },
        'tool_calls',
      ),
    );
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm' });
    const parameters = { type: 'object', properties: { tz: { type: 'string' } } };
    const response = await llm.chat([{ role: 'user', content: 'time?' }], {
      tools: [{ name: 'get_time', description: 'the time', parameters }],
      toolChoice: 'auto',
    });
    expect(response.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
    ]);
    expect(response.content).toBeNull();
    expect(response.finish_reason).toBe('tool_calls');
    expect(server.requests[0]?.body['tools']).toEqual([
      { type: 'function', function: { name: 'get_time', description: 'the time', parameters } },
    ]);
    expect(server.requests[0]?.body['tool_choice']).toBe('auto');
  });

  it('sends a tool-call turn and its results in the OpenAI shape, without content_blocks', async () => {
    server = await startChatServer(() => completion({ content: 'done' }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm' });
    const messages: Message[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'time?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
        content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
      },
      { role: 'tool', tool_call_id: 'c1', name: 'get_time', content: '12:00' },
    ];
    await llm.chat(messages);
    expect(server.requests[0]?.body['messages']).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'time?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '12:00' },
    ]);
  });

  it('a refused key (401) is llm_auth and is not retried', async () => {
    server = await startChatServer(() => errorReply(401, 'bad key'));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 3 });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_auth');
    expect(err.status).toBe(401);
    expect(server.requests).toHaveLength(1);
  });

  it('a 429 followed by success is retried and succeeds', async () => {
    server = await startChatServer((_body, i) => (i === 0 ? errorReply(429, 'slow down', NO_WAIT) : completion({ content: 'ok' })));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 2 });
    const response = await llm.chat([{ role: 'user', content: 'hi' }]);
    expect(response.content).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('a 429 that lasts past maxRetries is llm_rate_limited after maxRetries + 1 attempts', async () => {
    server = await startChatServer(() => errorReply(429, 'slow down', NO_WAIT));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 2 });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_rate_limited');
    expect(server.requests).toHaveLength(3);
  });

  it('a 500 is llm_unavailable after the bounded retries', async () => {
    server = await startChatServer(() => errorReply(500, 'boom', NO_WAIT));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 1 });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_unavailable');
    expect(err.status).toBe(500);
    expect(server.requests).toHaveLength(2);
  });

  it('a 400 is llm_bad_request', async () => {
    server = await startChatServer(() => errorReply(400, 'bad messages'));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm' });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_bad_request');
    expect(server.requests).toHaveLength(1);
  });

  it('a server that never answers is llm_timeout', async () => {
    server = await startChatServer(() => ({ hang: true }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 0, timeoutMs: 200 });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_timeout');
  });

  it("the caller's abort is llm_aborted", async () => {
    server = await startChatServer(() => ({ hang: true }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', maxRetries: 0 });
    const controller = new AbortController();
    const pending = llm.chat([{ role: 'user', content: 'hi' }], { signal: controller.signal });
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const err = await failure(pending);
    expect(err.code).toBe('llm_aborted');
  });

  it('no server listening is llm_unavailable', async () => {
    server = await startChatServer(() => completion({ content: 'x' }));
    const baseURL = server.baseURL;
    await server.close();
    server = undefined;
    const llm = openAICompatible({ apiKey: 'k', baseURL, model: 'm', maxRetries: 0 });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_unavailable');
  });

  it('with no baseURL it calls OPENAI_BASE_URL, not the public host', async () => {
    server = await startChatServer(() => completion({ content: 'from the env host' }));
    const before = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = server.baseURL;
    try {
      const llm = openAICompatible({ apiKey: 'k', model: 'm', maxRetries: 0, timeoutMs: 5_000 });
      const response = await llm.chat([{ role: 'user', content: 'hi' }]);
      expect(response.content).toBe('from the env host');
      expect(server.requests).toHaveLength(1);
    } finally {
      if (before === undefined) delete process.env['OPENAI_BASE_URL'];
      else process.env['OPENAI_BASE_URL'] = before;
    }
  });

  it("sends the service's temperature, and a call's own temperature wins over it", async () => {
    server = await startChatServer(() => completion({ content: 'ok' }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm', temperature: 0.2 });
    await llm.chat([{ role: 'user', content: 'reply' }]);
    await llm.chat([{ role: 'user', content: 'title' }], { temperature: 0 });
    expect(server.requests.map((r) => r.body['temperature'])).toEqual([0.2, 0]);
  });

  it('an already-aborted signal is llm_aborted without a request', async () => {
    server = await startChatServer(() => completion({ content: 'x' }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm' });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }], { signal: AbortSignal.abort() }));
    expect(err.code).toBe('llm_aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('an answer without choices is llm_error', async () => {
    server = await startChatServer(() => ({ body: { id: 'x', object: 'chat.completion', choices: [] } }));
    const llm = openAICompatible({ apiKey: 'k', baseURL: server.baseURL, model: 'm' });
    const err = await failure(llm.chat([{ role: 'user', content: 'hi' }]));
    expect(err.code).toBe('llm_error');
  });
});
