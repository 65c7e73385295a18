import { createAgent } from '../../agent/agent.ts';
import { dropFailedTurns, turnError } from '../../agent/failed-turns.ts';
import { InvalidInputError } from '../../errors.ts';
import { languageOf, type Language } from '../../language.ts';
import { fallbackChunks, fallbackReply } from '../../llm/fallback-llm.ts';
import { LlmError } from '../../llm/llm-errors.ts';
import { abortedError } from '../../llm/llm-stream.ts';
import type { JsonObject, Message } from '../../message.ts';
import type { ToolCallRecord } from '../../kernel/tool-call.ts';
import type { LoopEvent, StreamEvent } from '../../kernel/stream-events.ts';
import { validateIdempotencyKey } from '../../memory/contract/idempotency.ts';
import { generateTitle, offlineTitle } from '../rows/session-title.ts';
import { toSessionRow } from '../rows/session-row.ts';
import type { LocalTime } from '../rows/local-time.ts';
import { projectToolCalls } from '../rows/tool-call-projection.ts';
import { pythonJsonDumps } from '../rows/python-json.ts';
import type { RowError, ToolCallView } from '../rows/row-types.ts';
import { ensureFactsConverted } from '../facts/facts-service.ts';
import { longTermContext, type LongTermContext } from '../facts/rank-facts.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId, sessionConversationId } from '../recall-ids.ts';
import type { TurnSideWrites, WriteGuard } from '../storage/recall-store.ts';
import { buildPromptContext } from './prompt-context.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { turnTools } from './turn-tools.ts';
import { TurnInterruptedError } from './turn-interrupted.ts';
import { linkTo, noteLink, type TraceContext } from '../../telemetry/tracing.ts';
import { summaryLinkKey } from '../../provider/summarizer.ts';
import { extractionLinkKey } from '../jobs/extraction-worker.ts';
import { rowKeys, RunningTurns, storedTurn } from './turn-keys.ts';
import { assertRoomForSession } from '../recall-limits.ts';

/**
 * One chat turn of the Agent Memory Demo, `chat({userId, sessionId, message})`, in the Demo's
 * order. Turns of one session run one at a time, in every process sharing the store (the
 * store's `lockSession`); turns of different sessions run side by side.
 *
 * 1. Validate: ids follow recall-ids.ts (`invalid_id`), `message` is a string
 *    (`invalid_message`). An EMPTY message is accepted, as the Demo's API accepted it: it is
 *    stored as an empty user row, the offline reply is `收到：。我已经记录到记忆中。`, and the
 *    title of a session it opens is `新对话` for good. (The chat page never sends one.)
 * 2. Store the user row in the session and its daily mirror, registering a new session
 *    (unlisted), in ONE step of the store (`appendTurn`).
 * 3. Assemble the memory context from the last 6 session rows (the current message included:
 *    the Demo's "3 rounds"), minus failed turns (agent/failed-turns.ts), and the long-term
 *    facts within the token budget (facts/rank-facts.ts): `[SESSION]` / `[LONG_TERM]`
 *    sections, each only when non-empty (`[DAILY]` is never injected by a turn). With rolling
 *    summaries on (the default) and once the session has one, its latest summary (at most the
 *    summary's `maxTokens`) goes first, as a `[SUMMARY]` section. The turn's language
 *    (recall's `language`; `'auto'`: its message's, or `中文` in this context) is settled here.
 * 4. Reply. With no LLM configured: the Demo's offline reply from the message and that
 *    context, no tools. With one: an agent with the memory tools bound to this user and
 *    session and the system prompt (rules + context), run without a history of its own (the
 *    session reaches the model only through the context, as in the Demo).
 * 5. Store the reply row, with the turn's tool transcript (assistant `tool_calls` and `tool`
 *    results paired by `tool_call_id`) in its `meta.transcript`, its daily mirror (with the
 *    `{name, input, output}` projection), the dialogue-log row (message, reply, the exact
 *    context sent, tool calls), the turn's extraction job and key, and the session's listing:
 *    one step of the store. An offline turn is two commits in all. With summaries on, a
 *    session whose older part is due for a summary (`Summarizer.due`: one read of what follows
 *    its latest summary) gets its `summarize` job in the same step; the summary is made by
 *    the job worker in the background (jobs/summary-worker.ts), never inside a turn.
 * 6. Title: kept if the session has one; else made from this turn in its language
 *    (rows/session-title.ts; offline: in Chinese the first 12 code points of the message, in
 *    English its first words within 40; with an LLM: asked of it, falling back on error), in
 *    the step of 5 whenever it is known by then (every turn but an LLM session's first).
 * 7. Answer `{reply, memoryHits (1 when the long-term section is non-empty, else 0), title,
 *    toolCalls}`.
 *
 * CANCELLING: `signal` aborts the turn's model calls (the agent's and the title's). A signal
 * already aborted stores nothing and throws `TurnInterruptedError`; one that fires before
 * the reply is stored makes the turn a failed turn (below) whose error is `turn_interrupted`,
 * and that error is what is thrown. After the reply is stored it only cuts the title call short
 * (the offline title is used).
 *
 * A FAILED TURN (the agent or model throws, or a write after the user row fails) follows the
 * failed-turn rule of agent/failed-turns.ts, so it leaves no orphan user row: an assistant row
 * with content `''` and `meta.error: {code, message}` (Mnemo's own sentence) is stored in its
 * place (session and daily), with whatever tool calls were made before the failure, a log row
 * with the same `error`, and the session's listing (offline title); then the original error is
 * rethrown. Later turns leave the failed turn out of their `[SESSION]` context. If the storage
 * itself is failing, recording the error may fail too; the original error is still what is
 * thrown. A failure while storing the user row leaves nothing behind.
 *
 * STREAMING (`onEvent`, what `chatStream` passes): the same turn, step for step, reporting the
 * reply's text as it is written (the offline reply in `fallbackChunks`), each tool call and
 * result, and nothing else; `chatStream` adds `done`. A streamed turn that fails after text
 * was sent stores that text as its failed row's content (so a cut stream keeps what the user
 * saw, marked `turn_interrupted`); with no text sent, the row is `''` as above.
 *
 * IDEMPOTENCY (`idempotencyKey`, turn-keys.ts): a retry while the keyed turn runs in this
 * process awaits it (a streamed retry gets the reply as one `delta`); once answered, the result
 * is stored under the key with the reply row, and a retry gets it back without a model call.
 * The two session rows are appended under keys derived from it, so a retry after a crash
 * mid-turn stores neither twice. A retry after a FAILED keyed turn is a new attempt.
 *
 * ERASURE: the turn's later writes carry the guard its user row's write gave back, so a turn
 * whose user was erased meanwhile (by another process) stores nothing more (`write_stale`).
 */
export interface ChatInput {
  /** The user: 1-128 characters, no control character, no edge space, not `.` or `..` (`invalid_id` otherwise). */
  userId: string;
  /** The session (the same id rule); a new one is registered by its first turn. */
  sessionId: string;
  /** What the user said (`invalid_message` when not a string; `''` is accepted). */
  message: string;
  /** Cancels the turn (see CANCELLING above). */
  signal?: AbortSignal;
  /** Makes the turn exactly-once: a retry with the same key (1-200 characters) gets the
   * first attempt's result without a second model call (see turn-keys.ts). Default: none. */
  idempotencyKey?: string;
}

/** What a chat turn answers (the Demo's `/api/chat` body, camelCase). */
export interface ChatResult {
  /** The assistant's reply, as stored. */
  reply: string;
  /** 1 when the user's long-term memory was non-empty for this turn, else 0 (the Demo's rule). */
  memoryHits: number;
  /** The session's title after this turn. */
  title: string;
  /** The turn's memory tool calls, `{name, input, output}`, in call order. */
  toolCalls: ToolCallView[];
}

/**
 * What `recall.chatStream` yields, in the API's terms (`POST /api/chat/stream` sends each as
 * an SSE event of the same name):
 * - `delta`: a piece of the reply's text, as the model writes it;
 * - `tool_call`: a memory tool is about to run, `input` printed as in `toolCalls`;
 * - `tool_result`: it finished, with its output;
 * - `done`, last and once: exactly what `chat` returns, after the reply is stored.
 */
export type ChatStreamEvent =
  | {
      /** A piece of the reply. */
      type: 'delta';
      /** The text, as written. */
      text: string;
    }
  | {
      /** A memory tool is about to run. */
      type: 'tool_call';
      /** The tool's name. */
      name: string;
      /** Its arguments, printed as in `toolCalls`. */
      input: string;
    }
  | {
      /** A memory tool finished. */
      type: 'tool_result';
      /** The tool's name. */
      name: string;
      /** Its output. */
      output: string;
    }
  | {
      /** The turn is stored; last and once. */
      type: 'done';
      /** What `chat` returns. */
      result: ChatResult;
    };

const CONTEXT_ROWS = 6;

/** One turn as its steps see it. */
interface Turn {
  userId: string;
  sessionId: string;
  message: string;
  signal: AbortSignal | undefined;
  /** A keyed turn's key and attempt (turn-keys.ts). */
  keyed: { key: string; attempt: number } | undefined;
  onEvent: ((event: ChatStreamEvent) => void) | undefined;
  /** The guard of the turn's writes after its user row. */
  guard: WriteGuard;
  /**
   * The session's title as step 2 found it ('' for none yet). The turn holds the session, and
   * only a turn's reply gives a title, so it still holds at the reply: one read, not two.
   */
  title: string;
  /** Of what Mnemo writes for this turn (`languageOf`: the message's, then its context's too). */
  language: Language;
  /** The turn span's context: the parent of its model calls, tools and appends (telemetry/tracing.ts). */
  trace: TraceContext | undefined;
}

/** What the turn sent the model, and what it made so far (a failure records it). */
interface Progress {
  memoryContext: string;
  transcript: Message[];
  /** The reply's text streamed so far (the current model call's). */
  streamed: string;
  /** The reply row is stored: a failure after it is not a failed turn. */
  replied: boolean;
}

/** Turns in flight under an idempotency key, per recall instance (its store). */
const runningTurns = new WeakMap<object, RunningTurns<ChatResult>>();

export async function chatTurn(
  deps: RecallDeps,
  input: ChatInput,
  onEvent?: (event: ChatStreamEvent) => void,
  trace?: TraceContext,
): Promise<ChatResult> {
  const userId = assertUserId(input?.userId);
  const sessionId = assertSessionId(input?.sessionId);
  const message = input.message;
  if (typeof message !== 'string') {
    throw new InvalidInputError('invalid_message', 'message must be a string', { field: 'message' });
  }
  const turn = { userId, sessionId, message, signal: input.signal, onEvent, guard: {}, title: '', language: languageOf(deps.language, message), trace };
  const key = input.idempotencyKey === undefined ? undefined : validateIdempotencyKey(input.idempotencyKey);
  if (key === undefined) return locked(deps, { ...turn, keyed: undefined });
  let running = runningTurns.get(deps.store);
  if (running === undefined) runningTurns.set(deps.store, (running = new RunningTurns()));
  let ran = false;
  const result = await running.once(userId, sessionId, key, async () => {
    const stored = storedTurn(await deps.store.turnKey(userId, sessionId, key), deps.clock.now());
    if ('answer' in stored) return { ...stored.answer, title: (await deps.store.session(userId, sessionId))?.title || stored.answer.title };
    ran = true;
    return locked(deps, { ...turn, keyed: { key, attempt: stored.failedAttempts } });
  });
  // Answered by the stored turn or the one in flight: a stream gets the reply in one piece.
  if (!ran && onEvent !== undefined && result.reply !== '') onEvent({ type: 'delta', text: result.reply });
  return result;
}

/** The turn, holding its session (step order above). */
async function locked(deps: RecallDeps, turn: Turn): Promise<ChatResult> {
  if (turn.signal?.aborted) throw TurnInterruptedError.of(turn.signal);
  const unlock = await deps.store.lockSession(turn.userId, turn.sessionId);
  try {
    if (turn.signal?.aborted) throw TurnInterruptedError.of(turn.signal);
    return await runTurn(deps, turn);
  } finally {
    await unlock();
  }
}

async function runTurn(deps: RecallDeps, turn: Turn): Promise<ChatResult> {
  const userRecordId = await storeUserRow(deps, turn);
  const progress: Progress = { memoryContext: '', transcript: [], streamed: '', replied: false };
  try {
    const longTerm = await assembleContext(deps, turn, progress);
    const reply = await replyTo(deps, turn, longTerm, progress);
    return await storeReply(deps, turn, { reply, userRecordId, memoryHits: longTerm.text === '' ? 0 : 1 }, progress);
  } catch (caught) {
    const err = !progress.replied && turn.signal?.aborted ? TurnInterruptedError.of(turn.signal, caught) : caught;
    if (!progress.replied) await recordFailure(deps, turn, progress, err).catch(() => undefined);
    throw err;
  }
}

/** Step 2: the user row and its daily mirror; the session registered if new. Its record id. */
async function storeUserRow(deps: RecallDeps, turn: Turn): Promise<number> {
  const known = await deps.store.session(turn.userId, turn.sessionId);
  if (known === undefined) assertRoomForSession(await deps.store.sessions(turn.userId), deps.limits.sessionsPerUser);
  turn.title = known?.title ?? '';
  const asked = localNow(deps);
  const { records, guard } = await deps.store.appendTurn({
    userId: turn.userId,
    sessionId: turn.sessionId,
    entries: [{ message: { role: 'user', content: turn.message }, meta: { ts: asked.ts } }],
    ...(turn.keyed === undefined ? {} : { idempotencyKey: rowKeys(turn.keyed.key, turn.keyed.attempt).user }),
    opens: { now: asked.ts },
    with: ([record]) => ({ daily: [mirror(turn, asked, 'user', turn.message, record!.message_id)] }),
    traceContext: turn.trace,
  });
  turn.guard = guard;
  return records[0]!.message_id;
}

/** Step 3: the `[SUMMARY]`, `[SESSION]` and `[LONG_TERM]` sections; the long-term part returned. */
async function assembleContext(deps: RecallDeps, turn: Turn, progress: Progress): Promise<LongTermContext> {
  const conversationId = sessionConversationId(turn.userId, turn.sessionId);
  const view = await ensureFactsConverted(deps, turn.userId);
  const longTerm = await longTermContext(deps, view, turn.message, { tokenBudget: deps.longTermTokens });
  // The failed-turn rule (agent/failed-turns.ts): a failed turn is not sent to the model again.
  const session = dropFailedTurns(
    (await deps.memory.tail(conversationId, CONTEXT_ROWS)).map((r) => toSessionRow(r)),
    (row) => row.error !== undefined,
    (row) => row.role === 'user',
  );
  const summary = deps.summary === undefined ? undefined : (await deps.summary.reader.latest(conversationId))?.text;
  progress.memoryContext = buildPromptContext({ session, daily: [], longTerm: longTerm.text, ...(summary === undefined ? {} : { summary }) });
  turn.language = languageOf(deps.language, turn.message, progress.memoryContext);
  return longTerm;
}

/** Step 4: the reply, offline or from the agent with the memory tools. */
async function replyTo(deps: RecallDeps, turn: Turn, longTerm: LongTermContext, progress: Progress): Promise<string> {
  const { onEvent, signal, trace } = turn;
  if (deps.llm === undefined) {
    const reply = fallbackReply(turn.message, progress.memoryContext, turn.language);
    for (const text of onEvent ? fallbackChunks(reply) : []) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal?.aborted) throw abortedError(signal);
      progress.streamed += text;
      onEvent!({ type: 'delta', text });
    }
    return reply;
  }
  const agent = createAgent({
    llm: deps.llm,
    tools: turnTools(deps, turn.userId, turn.sessionId, longTerm.shown, turn.language),
    systemPrompt: buildSystemPrompt(progress.memoryContext, turn.language),
    memory: false,
    maxToolIterations: deps.maxToolIterations,
  });
  try {
    const run = onEvent
      ? await streamRun(agent.stream(turn.message, { signal, traceContext: trace }), (event) => {
          if (event.type === 'text') progress.streamed += event.delta;
          if (event.type === 'tool_call') progress.streamed = '';
          forward(event, onEvent);
        })
      : await agent.run(turn.message, { signal, traceContext: trace });
    progress.transcript = toolTranscript(run.messages.slice(1));
    return typeof run.response.content === 'string' ? run.response.content : '';
  } catch (err) {
    progress.transcript = transcriptOfRecords(toolCallsOf(err));
    throw err;
  }
}

/** Steps 5 to 7: the reply row and everything it implies, the title, the answer. */
async function storeReply(
  deps: RecallDeps,
  turn: Turn,
  made: { reply: string; userRecordId: number; memoryHits: number },
  progress: Progress,
): Promise<ChatResult> {
  const { userId, sessionId, message, keyed } = turn;
  const toolCalls = projectToolCalls(progress.transcript);
  const answered = localNow(deps);
  let reply = made.reply;
  // The title is known after a session's first turn (and offline, always): then the listing
  // rides in the commit of the reply. Only a first turn with an LLM asks for its title after
  // that commit, so a slow title call holds back nothing durable.
  const knownTitle = turn.title || (deps.llm === undefined ? offlineTitle(message, turn.language) : '');
  // Whether the session's older part is due for a summary: then its job rides in this commit.
  const summarize = deps.summary !== undefined && (await deps.summary.reader.due(sessionConversationId(userId, sessionId)));
  // The turn's span is looked up only for a job to link to it.
  const turnSpan = deps.factsLlm !== undefined || summarize ? linkTo(turn.trace) : undefined;
  const { session } = await deps.store.appendTurn(
    {
      userId,
      sessionId,
      entries: [{ message: { role: 'assistant', content: reply }, meta: replyMeta(answered.ts, progress.transcript) }],
      ...(keyed === undefined ? {} : { idempotencyKey: rowKeys(keyed.key, keyed.attempt).reply }),
      traceContext: turn.trace,
      with: ([record]): TurnSideWrites => {
        // A reply an earlier attempt of a keyed turn stored (it crashed before the turn's key
        // was committed) is the reply.
        if (typeof record!.message.content === 'string') reply = record!.message.content;
        const result = { reply, memoryHits: made.memoryHits, title: knownTitle, toolCalls };
        // Noted before the job commits, so its span (telemetry/tracing.ts) finds the turn's to link to.
        if (deps.factsLlm !== undefined) noteLink(extractionLinkKey(userId, { sessionId, replyId: record!.message_id }), turnSpan);
        if (summarize) noteLink(summaryLinkKey(sessionConversationId(userId, sessionId)), turnSpan);
        return {
          daily: [mirror(turn, answered, 'assistant', reply, record!.message_id, toolCalls)],
          log: logRow(turn, answered.ts, reply, progress.memoryContext, toolCalls),
          settles: true,
          jobs: [
            ...(deps.factsLlm === undefined ? [] : [extractionJob(turn, reply, [made.userRecordId, record!.message_id])]),
            ...(summarize ? [summaryJob(turn)] : []),
          ],
          ...(keyed === undefined ? {} : { turnKey: { key: keyed.key, value: { result, at: deps.clock.now() } } }),
          ...(knownTitle === '' ? {} : { touch: { title: knownTitle, updatedAt: localNow(deps).ts } }),
        };
      },
    },
    turn.guard,
  );
  progress.replied = true;
  const title =
    session?.title ??
    (await deps.store.touchSession(userId, sessionId, { title: await generateTitle(deps.llm, message, reply, turn.signal, turn.language, turn.trace), updatedAt: localNow(deps).ts }, turn.guard)).title;
  return { reply, memoryHits: made.memoryHits, title, toolCalls };
}

/** A failed turn's error row, its mirror and log row (see A FAILED TURN above). */
async function recordFailure(deps: RecallDeps, turn: Turn, progress: Progress, err: unknown): Promise<void> {
  const { userId, sessionId, keyed } = turn;
  const reply = progress.streamed;
  const error: RowError = turnError(err);
  const toolCalls = projectToolCalls(progress.transcript);
  const at = localNow(deps);
  await deps.store.appendTurn(
    {
      userId,
      sessionId,
      entries: [{ message: { role: 'assistant', content: reply }, meta: { ...replyMeta(at.ts, progress.transcript), error: { ...error } } }],
      traceContext: turn.trace,
      with: ([record]) => ({
        daily: [{ ...mirror(turn, at, 'assistant', reply, record!.message_id, toolCalls), error }],
        log: { ...logRow(turn, at.ts, reply, progress.memoryContext, toolCalls), error },
        settles: true,
        touch: { title: offlineTitle(turn.message, turn.language), updatedAt: at.ts },
        ...(keyed === undefined ? {} : { turnKey: { key: keyed.key, value: { failedAttempts: keyed.attempt + 1, at: deps.clock.now() } } }),
      }),
    },
    turn.guard,
  );
}

function mirror(turn: Turn, at: LocalTime, role: 'user' | 'assistant', content: string, sessionMessageId: number, toolCalls: ToolCallView[] = []) {
  return {
    day: at.day,
    ts: at.ts,
    role,
    content,
    sessionId: turn.sessionId,
    sessionMessageId,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}

function logRow(turn: Turn, ts: string, reply: string, memoryContext: string, toolCalls: ToolCallView[]) {
  return { ts, sessionId: turn.sessionId, userMessage: turn.message, assistantReply: reply, memoryContext, toolCalls };
}

function extractionJob(turn: Turn, reply: string, messageIds: number[]) {
  const payload = { sessionId: turn.sessionId, replyId: messageIds[1]!, userMessage: turn.message, assistantReply: reply, messageIds };
  return { kind: 'extract' as const, userId: turn.userId, payload };
}

/** The session's summary job, guarded by the incarnation this turn wrote under (job-queue.ts). */
function summaryJob(turn: Turn) {
  const { incarnation } = turn.guard;
  return { kind: 'summarize' as const, userId: turn.userId, payload: { sessionId: turn.sessionId, ...(incarnation === undefined ? {} : { incarnation }) } };
}

/** Reads an agent's stream to its end, handing each event on; resolves with the run's result. */
async function streamRun<R>(events: AsyncIterable<StreamEvent<R>>, each: (event: LoopEvent) => void): Promise<R> {
  for await (const event of events) {
    if (event.type === 'done') return event.result;
    each(event);
  }
  throw new LlmError('llm_error', 'the agent stream ended without a result');
}

/** The agent's events in the API's terms: `{name, input, output}` as in a turn's `toolCalls`. */
function forward(event: LoopEvent, onEvent: (event: ChatStreamEvent) => void): void {
  if (event.type === 'text') onEvent({ type: 'delta', text: event.delta });
  else if (event.type === 'tool_call') onEvent({ type: 'tool_call', name: event.call.name, input: pythonJsonDumps(event.call.args) });
  else onEvent({ type: 'tool_result', name: event.name, output: event.output });
}

function replyMeta(ts: string, transcript: Message[]): JsonObject {
  return transcript.length > 0 ? { ts, transcript: transcript as unknown as JsonObject[] } : { ts };
}

/** The run's messages after the user's, minus the final reply: the tool calls and their results. */
function toolTranscript(run: Message[]): Message[] {
  const last = run[run.length - 1];
  const final = last?.role === 'assistant' && !(last.tool_calls && last.tool_calls.length > 0);
  return (final ? run.slice(0, -1) : run).filter((m) => m.role === 'tool' || (m.role === 'assistant' && m.tool_calls?.length));
}

/** The agent's limit errors carry the calls made so far; keep them with the error row. */
function toolCallsOf(err: unknown): ToolCallRecord[] {
  const made = (err as { toolCallsMade?: unknown } | null)?.toolCallsMade;
  return Array.isArray(made) ? (made as ToolCallRecord[]) : [];
}

function transcriptOfRecords(records: ToolCallRecord[]): Message[] {
  return records.flatMap((r): Message[] => [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: r.id, type: 'function', function: { name: r.name, arguments: JSON.stringify(r.args) } }],
    },
    { role: 'tool', tool_call_id: r.id, content: r.result },
  ]);
}
