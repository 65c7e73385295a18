import { createAgent } from '../../agent/agent.ts';
import { dropFailedTurns, turnError } from '../../agent/failed-turns.ts';
import { InvalidInputError } from '../../errors.ts';
import { fallbackChunks, fallbackReply } from '../../llm/fallback-llm.ts';
import { LlmError } from '../../llm/llm-errors.ts';
import { abortedError } from '../../llm/llm-stream.ts';
import type { JsonObject, Message, StoredMessage } from '../../message.ts';
import type { ToolCallRecord } from '../../kernel/tool-call.ts';
import type { LoopEvent, StreamEvent } from '../../kernel/stream-events.ts';
import { generateTitle, offlineTitle } from '../store/session-title.ts';
import { catchUpDaily, mirrorSessionRow, rowsPending, rowsSettled, startMirror } from '../store/daily-mirror.ts';
import { putLogRow } from '../store/dialogue-log.ts';
import { factSeq } from '../facts/fact-entry.ts';
import { FactConflictError, FactNotFoundError } from '../facts/fact-errors.ts';
import { queueExtractionTx } from '../facts/fact-extraction.ts';
import { currentOf, nearDuplicateOf, type FactStore } from '../facts/fact-store.ts';
import { shapeOf } from '../facts/fact-text.ts';
import { ensureConverted, forgetFact, rememberFact, updateFact, writeDocument } from '../facts/facts-service.ts';
import { longTermContext } from '../facts/rank-facts.ts';
import type { RowError, ToolCallView } from '../store/memory-row.ts';
import { createMemoryTools } from './memory-tools.ts';
import { TOOL_TEXTS } from './tool-texts.ts';
import { buildPromptContext } from './prompt-context.ts';
import { commit } from '../store/recall-dbs.ts';
import { appendWithCommit } from '../store/session-commit.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId, sessionConversationId } from '../recall-ids.ts';
import {
  dailyWindowRows,
  recentSessionRows,
  searchDailyRows,
  searchSessionRows,
  sessionWindowRows,
} from '../search/recall-queries.ts';
import { DEFAULT_RANK_POOL_THRESHOLD } from '../search/ranked-search.ts';
import { searchHybrid } from '../embeddings/hybrid-search.ts';
import { createSearchMemoryTool } from '../search/search-memory-tool.ts';
import { toSessionRow } from '../store/session-row.ts';
import { TurnInterruptedError } from './turn-interrupted.ts';
import { pythonJsonDumps } from '../store/python-json.ts';
import { putTurnKey, rowKeys, RunningTurns, storedTurn } from './turn-keys.ts';
import { validateIdempotencyKey } from '../../memory/contract/idempotency.ts';
import { registerSession, sessionEntry, touchSession } from '../store/sessions-index.ts';
import { assertRoomForSession } from '../recall-limits.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { projectToolCalls } from '../store/tool-call-projection.ts';
import { noteLink } from '../../telemetry/tracing.ts';
import { extractionLinkKey } from '../facts/extraction-worker.ts';

/**
 * One chat turn of the Agent Memory Demo, `chat({userId, sessionId, message})`, in the demo's
 * order:
 *
 * 1. Validate: ids follow recall-ids.ts (`invalid_id`), `message` is a string
 *    (`invalid_message`). An EMPTY message is accepted, as the demo's API accepted it: it is
 *    stored as an empty user row, the offline reply is `收到：。我已经记录到记忆中。`, and the
 *    title of a session it opens is `新对话` for good. (The chat page never sends one.)
 * 2. Store the user row in the session (its MessageLog conversation) and in today's daily
 *    view with its session id, in ONE commit (session-commit.ts) when the session store lives
 *    in this environment (the runtime's case), with the turn's in-flight mark (`rowsPending`)
 *    and, for a new session, its registration (unlisted): a start after a kill finds the mark
 *    and repairs that session's daily view (daily-mirror.ts). Any row a crash left out of the
 *    daily view is mirrored first. Another store: the mark commits first, the rows after.
 * 3. Assemble the memory context from the last 6 session rows (the current message included:
 *    the demo's "3 rounds"), minus failed turns (agent/failed-turns.ts), and the long-term
 *    facts within the token budget (facts/rank-facts.ts: the whole rendered document while it
 *    fits, as in the demo; else the entries most relevant to the message): `[SESSION]` /
 *    `[LONG_TERM]` sections, each only when non-empty (`[DAILY]` is never injected by a turn).
 *    With rolling summaries on (`summary` option), the session's latest summary goes first, as
 *    a `[SUMMARY]` section (one `tail(1)` read of its companion conversation).
 * 4. Reply. With no LLM configured: the demo's offline reply from the message and that
 *    context, no tools. With one: an agent with the six memory tools bound to this user and
 *    session and the system prompt (rules + context), run without a history of its own (the
 *    session reaches the model only through the context, as in the demo).
 * 5. Store the reply row in the session, with the turn's tool transcript (assistant
 *    `tool_calls` and `tool` results paired by `tool_call_id`) in its `meta.transcript`,
 *    the daily row (with the `{name, input, output}` projection), the dialogue-log row
 *    (message, reply, the exact context sent, tool calls) and the settled mark: one commit, as
 *    in step 2. An offline turn is two commits (two fsyncs) in all. With summaries on, the
 *    session's summary check is then scheduled in the background (`afterTurn`, which never
 *    delays the reply).
 * 6. Title: kept if the session has one; else made from this turn (offline: the first 12
 *    code points of the message; with an LLM: asked of it, falling back on error). Then the
 *    index entry is listed and its `updated_at` refreshed, in the commit of step 5 whenever the
 *    title is known by then (every turn but an LLM session's first).
 * 7. Answer `{reply, memoryHits (1 when the long-term section is non-empty, else 0), title,
 *    toolCalls}`. With a facts model, the commit of step 5 also queues the turn for fact
 *    extraction (facts/fact-extraction.ts), which runs after the answer, in the background.
 *
 * CANCELLING: `signal` aborts the turn's model calls (the agent's and the title's). A signal
 * already aborted stores nothing and throws `TurnInterruptedError`; one that fires before
 * the reply is stored makes the turn a failed turn (below) whose error is `turn_interrupted`,
 * and that error is what is thrown. After the reply is stored it only cuts the title call short
 * (the offline title is used).
 *
 * A FAILED TURN (the agent or model throws, or a write after the user row fails) follows the
 * failed-turn rule of agent/failed-turns.ts, so it leaves no orphan user row: an assistant row with content `''` and `meta.error: {code, message}` is
 * stored in its place (session and daily), with whatever tool calls were made before the
 * failure, a log row with the same `error`, and the index entry (offline title); then the
 * original error is rethrown. Later turns leave the failed turn (error row and the user row it
 * answers) out of their `[SESSION]` context. Rolling back was not an option: a MessageLog only appends. If
 * the storage itself is failing, recording the error may fail too; the original error is
 * still what is thrown. A failure while storing the user row leaves nothing behind.
 *
 * STREAMING (`onEvent`, what `chatStream` passes): the same turn, step for step, reporting the
 * reply's text as it is written (the offline reply in `fallbackChunks`), each tool call and
 * result, and nothing else; `chatStream` adds `done`. A streamed turn that fails after text
 * was sent stores that text as its failed row's content (so a cut stream keeps what the user
 * saw, marked `turn_interrupted`); with no text sent, the row is `''` as above.
 *
 * IDEMPOTENCY (`idempotencyKey`, turn-keys.ts): a retry while the keyed turn runs in this
 * process awaits it (a streamed retry gets the reply as one `delta`); once answered, the
 * result is stored under the key in the commit of step 5 (with the reply row), and a retry
 * gets it back without a model call. The two session rows are appended under keys derived
 * from it, so a retry after a crash mid-turn stores neither twice. A retry after a FAILED keyed
 * turn is a new attempt: it stores the message again, then the reply (`[user, error, user,
 * reply]`: the failed attempt stays a failed turn, left out of later contexts).
 *
 * Parallel turns on one session interleave their rows (ids stay unique and contiguous: the
 * MessageLog numbers them); turns on different sessions touch different keys.
 */
export interface ChatInput {
  userId: string;
  sessionId: string;
  message: string;
  /** Cancels the turn (see CANCELLING above). */
  signal?: AbortSignal;
  /** Makes the turn exactly-once: a retry with the same key (1-200 characters) gets the
   * first attempt's result without a second model call (see turn-keys.ts). Default: none. */
  idempotencyKey?: string;
}

export interface ChatResult {
  reply: string;
  /** 1 when the user's long-term memory was non-empty for this turn, else 0 (the demo's rule). */
  memoryHits: number;
  title: string;
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
  | { type: 'delta'; text: string }
  | { type: 'tool_call'; name: string; input: string }
  | { type: 'tool_result'; name: string; output: string }
  | { type: 'done'; result: ChatResult };

const CONTEXT_ROWS = 6;

/** Turns in flight under an idempotency key, per recall instance (its dbs). */
const runningTurns = new WeakMap<object, RunningTurns<ChatResult>>();

export async function chatTurn(
  deps: RecallDeps,
  input: ChatInput,
  onEvent?: (event: ChatStreamEvent) => void,
): Promise<ChatResult> {
  const userId = assertUserId(input?.userId);
  const sessionId = assertSessionId(input?.sessionId);
  const message = input.message;
  if (typeof message !== 'string') {
    throw new InvalidInputError('invalid_message', 'message must be a string', { field: 'message' });
  }
  const key = input.idempotencyKey === undefined ? undefined : validateIdempotencyKey(input.idempotencyKey);
  if (key === undefined) return runTurn(deps, userId, sessionId, message, input.signal, undefined, onEvent);
  let running = runningTurns.get(deps.dbs);
  if (running === undefined) runningTurns.set(deps.dbs, (running = new RunningTurns()));
  let ran = false;
  const result = await running.once(userId, sessionId, key, async () => {
    const stored = storedTurn(deps.dbs, userId, sessionId, key, deps.clock.now());
    if ('answer' in stored) return { ...stored.answer, title: sessionEntry(deps.dbs, userId, sessionId)?.title || stored.answer.title };
    ran = true;
    return runTurn(deps, userId, sessionId, message, input.signal, { key, attempt: stored.failedAttempts }, onEvent);
  });
  // Answered by the stored turn or the one in flight: a stream gets the reply in one piece.
  if (!ran && onEvent !== undefined && result.reply !== '') onEvent({ type: 'delta', text: result.reply });
  return result;
}

async function runTurn(
  deps: RecallDeps,
  userId: string,
  sessionId: string,
  message: string,
  signal: AbortSignal | undefined,
  keyed: { key: string; attempt: number } | undefined,
  onEvent: ((event: ChatStreamEvent) => void) | undefined,
): Promise<ChatResult> {
  const conversationId = sessionConversationId(userId, sessionId);
  const dbs = deps.dbs;
  const key = keyed?.key;
  const keys = keyed === undefined ? undefined : rowKeys(keyed.key, keyed.attempt);
  if (signal?.aborted) throw TurnInterruptedError.of(signal);

  const asked = localNow(deps);
  // A session row a crash left out of the daily view is mirrored first (no commit when none).
  if (sessionEntry(dbs, userId, sessionId)) await catchUpDaily(deps, userId, sessionId);
  else assertRoomForSession(dbs, userId, deps.limits.sessionsPerUser);
  // Marked in flight (a start after a kill mirrors what the turn left), registered if new and
  // mirrored: with a shared commit, in the user row's own commit; else the mark first.
  const opening = () => {
    if (!sessionEntry(dbs, userId, sessionId)) {
      registerSession(dbs, userId, sessionId, asked.ts);
      startMirror(dbs, userId, sessionId);
    }
    rowsPending(dbs, userId, sessionId);
  };
  if (!deps.sharedCommits) await commit(dbs, opening);
  let userRecord: StoredMessage | undefined;
  try {
    [[userRecord]] = await appendWithCommit(
      deps,
      conversationId,
      [{ message: { role: 'user', content: message }, meta: { ts: asked.ts } }],
      ([record]) => {
        if (deps.sharedCommits) opening();
        mirrorSessionRow(dbs, userId, sessionId, {
          day: asked.day,
          ts: asked.ts,
          role: 'user',
          content: message,
          session_id: sessionId,
          session_message_id: record!.message_id,
        });
      },
      undefined,
      keys?.user,
    );
  } catch (err) {
    // A shared commit stored nothing; stored apart, the mark was raised on its own.
    if (!deps.sharedCommits) await commit(dbs, () => rowsSettled(dbs, userId, sessionId)).catch(() => undefined);
    throw err;
  }

  let transcript: Message[] = [];
  let memoryContext = '';
  let replied = false;
  // The text of the reply streamed so far (the current model call's: a call that asks for
  // tools does not make the reply).
  let streamed = '';
  try {
    await ensureConverted(deps, userId);
    const longTermSection = await longTermContext(deps.facts, userId, message, { tokenBudget: deps.longTermTokens });
    const longTerm = longTermSection.text;
    // The failed-turn rule (agent/failed-turns.ts): a failed turn is not sent to the model again.
    const session = dropFailedTurns(
      (await deps.memory.tail(conversationId, CONTEXT_ROWS)).map((r) => toSessionRow(r)),
      (row) => row.error !== undefined,
      (row) => row.role === 'user',
    );
    const summary = deps.summarizer === undefined ? undefined : (await deps.summarizer.latest(conversationId))?.text;
    memoryContext = buildPromptContext({ session, daily: [], longTerm, ...(summary === undefined ? {} : { summary }) });

    let reply: string;
    if (deps.llm === undefined) {
      reply = fallbackReply(message, memoryContext, deps.language);
      if (onEvent) {
        for (const text of fallbackChunks(reply)) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (signal?.aborted) throw abortedError(signal);
          streamed += text;
          onEvent({ type: 'delta', text });
        }
      }
    } else {
      const agent = createAgent({
        llm: deps.llm,
        tools: turnTools(deps, userId, sessionId, longTermSection.shown),
        systemPrompt: buildSystemPrompt(memoryContext, deps.language),
        memory: false,
        maxToolIterations: deps.maxToolIterations,
      });
      try {
        const run = onEvent
          ? await streamRun(agent.stream(message, signal ? { signal } : {}), (event) => {
              if (event.type === 'text') streamed += event.delta;
              if (event.type === 'tool_call') streamed = '';
              forward(event, onEvent);
            })
          : await agent.run(message, signal ? { signal } : {});
        reply = typeof run.response.content === 'string' ? run.response.content : '';
        transcript = toolTranscript(run.messages.slice(1));
      } catch (err) {
        transcript = transcriptOfRecords(toolCallsOf(err));
        throw err;
      }
    }

    const toolCalls = projectToolCalls(transcript);
    const answered = localNow(deps);
    // The title is known after a session's first turn (and offline, always): then the index
    // update rides in the commit of the reply, daily and log rows. Only a first turn with an LLM
    // asks for its title after that commit, so a slow title call holds back nothing durable.
    const knownTitle = sessionEntry(dbs, userId, sessionId)?.title || (deps.llm === undefined ? offlineTitle(message, deps.language) : '');
    let [[replyRow], entry] = await appendWithCommit(
      deps,
      conversationId,
      [{ message: { role: 'assistant', content: reply }, meta: replyMeta(answered.ts, transcript) }],
      ([replyRecord]) => {
        // A reply an earlier attempt of a keyed turn stored (it crashed before the turn's key
        // was committed) is the reply.
        if (typeof replyRecord!.message.content === 'string') reply = replyRecord!.message.content;
        mirrorSessionRow(dbs, userId, sessionId, {
          day: answered.day,
          ts: answered.ts,
          role: 'assistant',
          content: reply,
          session_id: sessionId,
          session_message_id: replyRecord!.message_id,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        });
        putLogRow(dbs, userId, sessionId, {
          ts: answered.ts,
          session_id: sessionId,
          user_message: message,
          assistant_reply: reply,
          memory_context: memoryContext,
          tool_calls: toolCalls,
        });
        rowsSettled(dbs, userId, sessionId);
        if (deps.factsLlm !== undefined) {
          queueExtractionTx(dbs, userId, sessionId, replyRecord!.message_id, {
            user_message: message,
            assistant_reply: reply,
            message_ids: [userRecord!.message_id, replyRecord!.message_id],
            queued_at: answered.ts,
          });
        }
        // The turn's answer under its key, in the turn's final commit (turn-keys.ts).
        if (key !== undefined) {
          const result = { reply, memoryHits: longTerm === '' ? 0 : 1, title: knownTitle, toolCalls };
          putTurnKey(dbs, userId, sessionId, key, { result, at: deps.clock.now() });
        }
        return knownTitle === '' ? undefined : touchSession(dbs, userId, sessionId, knownTitle, localNow(deps).ts);
      },
      () => (replied = true),
      keys?.reply,
    );
    if (deps.factsLlm !== undefined) noteLink(extractionLinkKey([userId, sessionId, replyRow!.message_id]));
    deps.kickExtraction?.();
    // In the background: the summary check (and any summarization) never delays this reply.
    deps.summarizer?.afterTurn(conversationId);
    if (entry === undefined) {
      const title = await generateTitle(deps.llm, message, reply, signal, deps.language);
      entry = await commit(dbs, () => touchSession(dbs, userId, sessionId, title, localNow(deps).ts));
    }
    return { reply, memoryHits: longTerm === '' ? 0 : 1, title: entry.title, toolCalls };
  } catch (caught) {
    const err = !replied && signal?.aborted ? TurnInterruptedError.of(signal, caught) : caught;
    if (!replied) {
      await recordFailure(deps, userId, sessionId, { message, memoryContext, transcript, reply: streamed }, err, keyed).catch(() => undefined);
    }
    throw err;
  }
}

/**
 * The tools of one turn, bound to its user and session: the demo's six, the fact tools, then
 * `search_memory`. `shown`: the entries its `[LONG_TERM]` section showed (`'all'` outside a
 * turn): `remember_note` rewrites the document the model saw, so entries it was never shown
 * stay current.
 */
export function turnTools(deps: RecallDeps, userId: string, sessionId: string, shown: ReadonlySet<number> | 'all' = 'all') {
  const source = { via: 'tool', session_id: sessionId } as const;
  const t = TOOL_TEXTS[deps.language];
  const demoAndFactTools = createMemoryTools({
    rememberNote: async (note) => {
      const keep = shown === 'all' ? undefined : unshown(deps.facts, userId, shown);
      await writeDocument(deps, userId, note, 'remember_note', keep);
    },
    remember: async (text, key) => {
      const w = await rememberFact(deps, userId, { text, ...(key === undefined ? {} : { key }), source });
      return w.status === 'duplicate' ? t.alreadyRemembered(w.entry.id) : t.stored(w.entry.id);
    },
    updateMemory: async (target, text) => {
      const hit = findFact(deps, userId, target);
      if (hit === undefined) return t.noSuchMemory;
      try {
        const w = await updateFact(deps, userId, hit.id, { text, version: hit.version, source });
        return w.status === 'unchanged' ? t.unchanged(w.entry.id) : t.updated(w.entry.id);
      } catch (error) {
        if (error instanceof FactConflictError) return t.changedMeanwhile;
        if (error instanceof FactNotFoundError) return t.noSuchMemory;
        throw error;
      }
    },
    forget: async (target) => {
      const hit = findFact(deps, userId, target);
      if (hit === undefined) return t.noSuchMemory;
      try {
        return t.forgotten((await forgetFact(deps, userId, hit.id)).id);
      } catch (error) {
        if (error instanceof FactNotFoundError) return t.noSuchMemory;
        throw error;
      }
    },
    recentSession: (rounds) => recentSessionRows(deps, userId, sessionId, rounds),
    searchSession: (keyword, limit) => searchSessionRows(deps, userId, sessionId, keyword, limit),
    sessionWindow: (id, before, after) => sessionWindowRows(deps, userId, sessionId, id, before, after),
    searchDaily: (keyword, day, limit) => searchDailyRows(deps, userId, keyword, limit, day),
    dailyWindow: (id, before, after, day) => dailyWindowRows(deps, userId, id, before, after, day),
  }, deps.language);
  return [
    ...demoAndFactTools,
    createSearchMemoryTool((args) => searchHybrid(deps, { userId, ...args }, DEFAULT_RANK_POOL_THRESHOLD), deps.language),
  ];
}

async function recordFailure(
  deps: RecallDeps,
  userId: string,
  sessionId: string,
  turn: { message: string; memoryContext: string; transcript: Message[]; reply?: string },
  err: unknown,
  /** A keyed turn's attempt: the next one gets rows of its own (turn-keys.ts). */
  keyed?: { key: string; attempt: number },
): Promise<void> {
  const { message, memoryContext, transcript } = turn;
  const reply = turn.reply ?? '';
  const dbs = deps.dbs;
  const error: RowError = turnError(err);
  const toolCalls = projectToolCalls(transcript);
  const at = localNow(deps);
  await appendWithCommit(
    deps,
    sessionConversationId(userId, sessionId),
    [{ message: { role: 'assistant', content: reply }, meta: { ...replyMeta(at.ts, transcript), error: { ...error } } }],
    ([record]) => {
      mirrorSessionRow(dbs, userId, sessionId, {
        day: at.day,
        ts: at.ts,
        role: 'assistant',
        content: reply,
        session_id: sessionId,
        session_message_id: record!.message_id,
        error,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      });
      putLogRow(dbs, userId, sessionId, {
        ts: at.ts,
        session_id: sessionId,
        user_message: message,
        assistant_reply: reply,
        memory_context: memoryContext,
        tool_calls: toolCalls,
        error,
      });
      rowsSettled(dbs, userId, sessionId);
      touchSession(dbs, userId, sessionId, offlineTitle(message, deps.language), at.ts);
      if (keyed !== undefined) putTurnKey(dbs, userId, sessionId, keyed.key, { failedAttempts: keyed.attempt + 1, at: deps.clock.now() });
    },
  );
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

/** The current entries a turn did not show. */
function unshown(store: FactStore, userId: string, shown: ReadonlySet<number>): Set<number> {
  return new Set([...currentOf(store, userId).keys()].filter((seq) => !shown.has(seq)));
}

/** A current entry named by id, by key, or by (nearly) its text, as the model saw it. */
function findFact(deps: RecallDeps, userId: string, target: { id?: string; key?: string; memory?: string }) {
  const current = currentOf(deps.facts, userId);
  const seq = factSeq(target.id) ?? (target.key === undefined ? undefined : deps.dbs.factKeys.get([userId, target.key]));
  const byRef = seq === undefined ? undefined : current.get(seq);
  if (byRef) return byRef.entry;
  if (target.memory === undefined || target.memory.trim() === '') return undefined;
  return nearDuplicateOf(current, shapeOf(target.memory))?.entry;
}
