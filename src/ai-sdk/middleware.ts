/**
 * `mnemoMiddleware({ runtime, userId, sessionId })`: a language model middleware for the AI
 * SDK's `wrapLanguageModel` that makes every call of the model a turn of one Mnemo session, as
 * `recall.chat` makes its own (recall/chat/chat-service.ts):
 *
 * - BEFORE each call (`transformParams`), the memory context goes into the prompt as one system
 *   message, after the app's own leading system messages: `[SESSION]` the session's newest
 *   `sessionRows` rows (default 6, the Demo's three rounds; failed turns left out), `[LONG_TERM]`
 *   the user's current facts ranked against the message within recall's token budget, and with
 *   `recall: n` (default 0, none) `[RECALL]` the n best hits of ranked search over everything
 *   of the user, each with its anchor. Nothing is added when there is nothing to say, nor to a
 *   prompt without a user message. The history comes from Mnemo: send only the new message.
 * - AFTER it (`wrapGenerate`, `wrapStream`): once the model answers without asking for a tool
 *   (a tool call it leaves to the client means the turn goes on in the next call), the prompt's
 *   last user message and the reply are stored (`recall.recordTurn`): the reply's text, and as
 *   its tool transcript the tool calls and results of the steps since that user message (the
 *   SDK's multi-step calls, `stopWhen`), in the session, the daily view, the index and, with a
 *   facts model, the extraction queue. A streamed answer is stored when its stream ends, before
 *   the stream closes; a stream that fails or is cancelled stores nothing.
 *
 * A failure to read or store memory fails the call with recall's error (a `MnemoError`): an app
 * that must answer anyway catches it. Options are checked when the middleware is made
 * (`InvalidInputError`: `invalid_id`, `invalid_option`).
 */
import type { LanguageModelMiddleware } from 'ai';
import { InvalidInputError } from '../errors.ts';
import type { Message } from '../message.ts';
import { dropFailedTurns } from '../agent/failed-turns.ts';
import { buildPromptContext } from '../recall/chat/prompt-context.ts';
import { assertSessionId, assertUserId } from '../recall/recall-ids.ts';
import { rankedFactTexts, recallLines, recentRows, recordTurn, type MemoryRecall } from '../mcp/recall-view.ts';

/** What `mnemoMiddleware` takes. */
export interface MnemoMiddlewareOptions {
  /** A runtime (`startRuntime`), or anything with its `recall`. */
  runtime: {
    /** The recall service memory is read from and stored in. */
    readonly recall: MemoryRecall;
  };
  /** The user whose memory it is. */
  userId: string;
  /** The session every call is a turn of. */
  sessionId: string;
  /** Ranked recall hits put in the prompt, 0..100. Default 0: none. */
  recall?: number;
  /** Session rows in the prompt's window, 0..500. Default 6. */
  sessionRows?: number;
}

type CallParams = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type Prompt = CallParams['prompt'];
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/** The session rows in the prompt by default (`sessionRows`): the Demo's three rounds. */
export const DEFAULT_SESSION_ROWS = 6;

/**
 * A middleware for `wrapLanguageModel` that puts the memory context in each call's prompt and
 * stores each finished turn in the session (see above).
 *
 * @throws `InvalidInputError` `invalid_id` for an unusable `userId` or `sessionId`;
 * `invalid_option` for a `recall` or `sessionRows` out of range.
 */
export function mnemoMiddleware(options: MnemoMiddlewareOptions): LanguageModelMiddleware {
  const userId = assertUserId(options.userId);
  const sessionId = assertSessionId(options.sessionId);
  const hits = whole(options.recall ?? 0, 'recall', 100);
  const sessionRows = whole(options.sessionRows ?? DEFAULT_SESSION_ROWS, 'sessionRows', 500);
  const { recall } = options.runtime;
  // What each call was given, for the dialogue log (the params object transformParams made).
  const given = new WeakMap<object, string>();

  const store = async (params: CallParams, reply: string): Promise<void> => {
    const turn = turnOf(params.prompt);
    if (turn === undefined) return;
    await recordTurn(recall, { userId, sessionId, message: turn.message, reply, toolTranscript: turn.transcript, memoryContext: given.get(params) ?? '' });
  };

  return {
    specificationVersion: 'v4',

    transformParams: async ({ params }) => {
      const turn = turnOf(params.prompt);
      if (turn === undefined) return params;
      const [rows, facts, lines] = await Promise.all([
        sessionRows === 0 ? [] : recentRows(recall, userId, sessionId, sessionRows),
        rankedFactTexts(recall, userId, turn.message),
        hits === 0 || turn.message.trim() === '' ? [] : recallLines(recall, userId, turn.message, hits),
      ]);
      const session = dropFailedTurns(rows, (r) => r.failed, (r) => r.role === 'user');
      const sections = [buildPromptContext({ session, daily: [], longTerm: facts.join('\n') })];
      if (lines.length > 0) sections.push(['[RECALL]', ...lines].join('\n'));
      const context = sections.filter((s) => s !== '').join('\n');
      if (context === '') return params;
      const next = { ...params, prompt: withSystem(params.prompt, context) };
      given.set(next, context);
      return next;
    },

    wrapGenerate: async ({ doGenerate, params }) => {
      const result: GenerateResult = await doGenerate();
      if (!result.content.some(isClientToolCall)) {
        await store(params, result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join(''));
      }
      return result;
    },

    wrapStream: async ({ doStream, params }) => {
      const { stream, ...rest } = await doStream();
      let text = '';
      let callsTool = false;
      let failed = false;
      let finished = false;
      const watched = stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            if (part.type === 'text-delta') text += part.delta;
            else if (isClientToolCall(part)) callsTool = true;
            else if (part.type === 'error') failed = true;
            else if (part.type === 'finish') finished = true;
            controller.enqueue(part);
          },
          async flush() {
            if (finished && !failed && !callsTool) await store(params, text);
          },
        }),
      );
      return { ...rest, stream: watched };
    },
  };
}

function whole(value: number, option: string, max: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new InvalidInputError('invalid_option', `${option} must be an integer from 0 to ${max}, got ${String(value)}`, { option });
  }
  return value;
}

function isClientToolCall(part: { type: string; providerExecuted?: boolean }): boolean {
  return part.type === 'tool-call' && part.providerExecuted !== true;
}

/** The memory as a system message after the prompt's leading system messages. */
function withSystem(prompt: Prompt, context: string): Prompt {
  let at = 0;
  while (at < prompt.length && prompt[at]!.role === 'system') at++;
  return [...prompt.slice(0, at), { role: 'system', content: context }, ...prompt.slice(at)];
}

/**
 * The turn a prompt carries: its last user message's text, and what came after it (the tool
 * calls and results of earlier steps of this turn) in the chat-completions shape recall keeps.
 */
function turnOf(prompt: Prompt): { message: string; transcript: Message[] } | undefined {
  let at = prompt.length - 1;
  while (at >= 0 && prompt[at]!.role !== 'user') at--;
  if (at < 0) return undefined;
  const user = prompt[at]!;
  const message = user.role === 'user' ? user.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('') : '';
  const transcript: Message[] = [];
  for (const m of prompt.slice(at + 1)) {
    if (m.role === 'assistant') {
      const calls = m.content.flatMap((p) =>
        p.type === 'tool-call' && p.providerExecuted !== true
          ? [{ id: p.toolCallId, type: 'function' as const, function: { name: p.toolName, arguments: JSON.stringify(p.input ?? {}) } }]
          : [],
      );
      if (calls.length === 0) continue;
      const said = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      transcript.push({ role: 'assistant', content: said === '' ? null : said, tool_calls: calls });
    } else if (m.role === 'tool') {
      for (const p of m.content) {
        if (p.type === 'tool-result') transcript.push({ role: 'tool', tool_call_id: p.toolCallId, name: p.toolName, content: outputText(p.output) });
      }
    }
  }
  return { message, transcript };
}

type ToolOutput = Extract<Extract<Prompt[number], { role: 'tool' }>['content'][number], { type: 'tool-result' }>['output'];

function outputText(output: ToolOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'execution-denied':
      return output.reason === undefined ? 'execution denied' : `execution denied: ${output.reason}`;
    default:
      return JSON.stringify('value' in output ? output.value : output);
  }
}
