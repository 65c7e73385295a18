import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenAI-compatible chat-completions endpoint on 127.0.0.1 (port 0), standing in for a
 * model so tests can drive the real server through real tool calls offline. It behaves like a
 * tool-eager model:
 *
 * - a request that offers tools and whose last message is the user's gets a call to
 *   `search_session` (the first offered tool if that one is absent) with the user's first
 *   word as keyword;
 * - a request that ends with tool results gets the final answer
 *   `stub answer to "<user message>" (<n> tool results)`;
 * - a request with no tools (the title generator) gets the first 10 characters of the
 *   conversation's user message (the `用户:` line of the title prompt);
 * - a request whose user message contains `#fail` gets a 400 error (no retries by the client).
 *
 * `hold()` makes the next answers wait until `release()`, so a test can act while a turn is
 * in flight; `received` resolves with each request as it arrives.
 *
 * A request with `stream: true` is answered the streaming way (SSE `data:` chunks, then
 * `data: [DONE]`): the text in `streamChunks` pieces (default: word by word), each its own
 * write after a turn of the event loop (or `tokenGapMs`); a tool call in pieces over several
 * chunks (id and name first, then the arguments in two halves); a usage chunk last.
 * `stallAfter: n` stops after n text pieces and keeps the request open until the client
 * drops it. `tokenTimes[i]` holds `performance.now()` at each text write of request i;
 * `aborted` counts requests the client dropped before their answer ended.
 *
 * With `reply` (or `startChatServer(reply)`, for tests of the client itself) every request is
 * answered from that script instead: a status, headers and a JSON body, or no answer (`hang`).
 * Every request is recorded with its path and headers (`recorded`).
 */
export interface ChatStub {
  baseURL: string;
  requests: Record<string, unknown>[];
  /** The same requests with their path and headers. */
  recorded: Recorded[];
  /** Answers wait until `release()` is called. */
  hold(): void;
  release(): void;
  /** Resolves when the n-th request (1-based) has arrived. */
  waitForRequest(n: number): Promise<Record<string, unknown>>;
  /** Per request, when each streamed text piece was written (`performance.now()`). */
  tokenTimes: number[][];
  /** Requests the client dropped before their answer ended. */
  readonly aborted: number;
  /** Resolves when `aborted` reaches n. */
  waitForAbort(n?: number): Promise<void>;
  close(): Promise<void>;
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown[];
}

interface WireTool {
  function?: { name?: string };
}

/** A request as it arrived. */
export interface Recorded {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A scripted answer (`reply` option): status, headers, JSON body, or no answer at all. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Never answer (to test timeouts). */
  hang?: boolean;
}

export interface ChatStubOptions {
  /** Answers each request from a script instead of the tool-eager behaviour below. */
  reply?: (body: Record<string, unknown>, index: number) => Reply;
  /** The final answer after the tool results (default: the `stub answer to ...` text). */
  answer?: (userText: string, toolResults: number) => string;
  /** The tool to call for a user message; `null` answers at once (default: search_session). */
  toolCall?: (userText: string) => { name: string; arguments: Record<string, unknown> } | null;
  /** The title for a conversation that began with `userText`. */
  title?: (userText: string) => string;
  /** How a streamed answer's text is cut into pieces (default: word by word, spaces kept). */
  streamChunks?: (content: string) => string[];
  /** Pause between streamed pieces, ms (default 0: the next turn of the event loop). */
  tokenGapMs?: number;
  /** Stream only this many text pieces, then hang until the client drops the request. */
  stallAfter?: number;
}

export async function startChatStub(options: ChatStubOptions = {}): Promise<ChatStub> {
  const requests: Record<string, unknown>[] = [];
  const recorded: Recorded[] = [];
  const waiters: { n: number; resolve: (b: Record<string, unknown>) => void }[] = [];
  let gate: Promise<void> | null = null;
  let open: () => void = () => {};
  let calls = 0;
  const tokenTimes: number[][] = [];
  let aborted = 0;
  const abortWaiters: { n: number; resolve: () => void }[] = [];

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
      requests.push(body);
      recorded.push({ path: req.url ?? '', headers: req.headers, body });
      const times: number[] = [];
      tokenTimes.push(times);
      res.on('close', () => {
        if (res.writableFinished) return;
        aborted += 1;
        for (const w of abortWaiters.filter((w) => w.n <= aborted)) {
          abortWaiters.splice(abortWaiters.indexOf(w), 1);
          w.resolve();
        }
      });
      for (const w of waiters.filter((w) => w.n <= requests.length)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(body);
      }
      void (gate ?? Promise.resolve()).then(() => {
        if (options.reply) {
          const r = options.reply(body, requests.length - 1);
          if (r.hang) return;
          res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
          res.end(JSON.stringify(r.body ?? {}));
          return;
        }
        if (lastUserText(body).includes('#fail')) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'stub refused the request', type: 'invalid_request_error' } }));
          return;
        }
        if (body['stream'] === true) {
          void streamAnswer(res, answer(body), times);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completionBody(answer(body))));
      });
    });
  });

  function answer(body: Record<string, unknown>): Record<string, unknown> {
    const messages = (body['messages'] ?? []) as WireMessage[];
    const tools = (body['tools'] ?? []) as WireTool[];
    const last = messages[messages.length - 1];
    const userText = lastUserText(body);
    if (tools.length === 0) {
      const first = /^用户: (.*)$/m.exec(userText)?.[1] ?? userText;
      return { content: options.title?.(first) ?? Array.from(first).slice(0, 10).join('') };
    }
    if (last?.role === 'user') {
      const names = tools.map((t) => t.function?.name ?? '');
      const call = options.toolCall
        ? options.toolCall(userText)
        : {
            name: names.includes('search_session') ? 'search_session' : (names[0] ?? 'search_session'),
            arguments: { keyword: userText.split(/\s+/)[0] ?? '' },
          };
      if (call !== null) {
        calls += 1;
        return {
          content: null,
          tool_calls: [
            { id: `call_${calls}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
          ],
        };
      }
    }
    const results = messages.filter((m) => m.role === 'tool').length;
    return { content: options.answer?.(userText, results) ?? `stub answer to "${userText}" (${results} tool results)` };
  }

  async function streamAnswer(res: ServerResponse, message: Record<string, unknown>, times: number[]): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.socket?.setNoDelay(true);
    const send = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): void => {
      res.write(`data: ${JSON.stringify(chunk(delta, finish, extra))}\n\n`);
    };
    const pause = (): Promise<void> =>
      new Promise((resolve) => (options.tokenGapMs ? setTimeout(resolve, options.tokenGapMs) : setImmediate(resolve)));
    send({ role: 'assistant', content: '' });
    const content = message['content'];
    if (typeof content === 'string') {
      const pieces = options.streamChunks?.(content) ?? (content.match(/\s*\S+\s*|\s+/g) ?? []);
      for (let i = 0; i < pieces.length; i++) {
        if (options.stallAfter !== undefined && i >= options.stallAfter) return; // hang: the client must drop it
        await pause();
        if (res.destroyed) return;
        times.push(performance.now());
        send({ content: pieces[i] });
      }
    }
    const toolCalls = (message['tool_calls'] ?? []) as { id: string; function: { name: string; arguments: string } }[];
    for (const [index, call] of toolCalls.entries()) {
      const args = call.function.arguments;
      const half = Math.ceil(args.length / 2);
      send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
      await pause();
      send({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] });
      await pause();
      send({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
    }
    if (res.destroyed) return;
    send({}, toolCalls.length > 0 ? 'tool_calls' : 'stop');
    res.write(`data: ${JSON.stringify({ ...chunk({}, null), choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    recorded,
    hold() {
      gate ??= new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      open();
      gate = null;
    },
    tokenTimes,
    get aborted() {
      return aborted;
    },
    waitForAbort(n = 1) {
      if (aborted >= n) return Promise.resolve();
      return new Promise((resolve) => abortWaiters.push({ n, resolve }));
    },
    waitForRequest(n) {
      const got = requests[n - 1];
      if (got) return Promise.resolve(got);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body['messages'] ?? []) as WireMessage[];
  return textOf([...messages].reverse().find((m) => m.role === 'user')?.content);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String(p.text) : '')).join('');
  }
  return '';
}

function completionBody(message: Record<string, unknown>): Record<string, unknown> {
  const finish = message['tool_calls'] ? 'tool_calls' : 'stop';
  return {
    id: 'chatcmpl-stub',
    object: 'chat.completion',
    created: 1,
    model: 'stub-model',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function chunk(delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-stub',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'stub-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** The stub with scripted answers only, for tests of the client itself. */
export interface ChatServer {
  baseURL: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function startChatServer(reply: (body: Record<string, unknown>, index: number) => Reply): Promise<ChatServer> {
  const stub = await startChatStub({ reply });
  return { baseURL: stub.baseURL, requests: stub.recorded, close: () => stub.close() };
}

/** A chat-completions answer with one choice. */
export function completion(message: Record<string, unknown>, finishReason = 'stop'): Reply {
  return {
    body: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1,
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    },
  };
}

export function errorReply(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { error: { message, type: 'test_error', code: null } } };
}
