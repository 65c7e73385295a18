import { createAgent } from '../../agent/agent.ts';
import { dropFailedTurns, turnError } from '../../agent/failed-turns.ts';
import { InvalidInputError } from '../../errors.ts';
import { fallbackReply } from '../../llm/fallback-llm.ts';
import type { JsonObject, Message, StoredMessage } from '../../message.ts';
import type { ToolCallRecord } from '../../kernel/tool-call.ts';
import { generateTitle, offlineTitle } from '../store/session-title.ts';
import { catchUpDaily, mirrorSessionRow, rowsPending, rowsSettled, startMirror } from '../store/daily-mirror.ts';
import { putLogRow } from '../store/dialogue-log.ts';
import { currentLongTerm, writeLongTerm } from '../store/long-term-store.ts';
import type { RowError, ToolCallView } from '../store/memory-row.ts';
import { createMemoryTools } from './memory-tools.ts';
import { buildPromptContext } from './prompt-context.ts';
import { commit } from '../store/recall-dbs.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId, sessionConversationId } from '../recall-ids.ts';
import {
  dailyWindowRows,
  recentSessionRows,
  searchDailyRows,
  searchSessionRows,
  sessionWindowRows,
} from '../search/recall-queries.ts';
import { toSessionRow } from '../store/session-row.ts';
import { TurnInterruptedError } from './turn-interrupted.ts';
import { registerSession, sessionEntry, touchSession } from '../store/sessions-index.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { projectToolCalls } from '../store/tool-call-projection.ts';

/**
 * One chat turn of the Agent Memory Demo, `chat({userId, sessionId, message})`, in the demo's
 * order:
 *
 * 1. Validate: ids follow recall-ids.ts (`invalid_id`), `message` is a string
 *    (`invalid_message`). An EMPTY message is accepted, as the demo's API accepted it: it is
 *    stored as an empty user row, the offline reply is `收到：。我已经记录到记忆中。`, and the
 *    title of a session it opens is `新对话` for good. (The chat page never sends one.)
 * 2. Store the user row in the session (its MessageLog conversation), then in today's daily
 *    view with its session id (first mirroring any row a crash left out of it: daily-mirror.ts). A new session is registered, unlisted, just before its first
 *    row, so every session with rows can be found, exported and deleted. Before the user row,
 *    the turn is marked in flight (`rowsPending`), and the commit of its last daily row
 *    settles it, so a start after a kill repairs the daily view of that session.
 * 3. Assemble the memory context from the last 6 session rows (the current message included:
 *    the demo's "3 rounds"), minus failed turns (agent/failed-turns.ts), and the whole long-term document: `[SESSION]` / `[LONG_TERM]`
 *    sections, each only when non-empty (`[DAILY]` is never injected by a turn, as in the demo).
 * 4. Reply. With no LLM configured: the demo's offline reply from the message and that
 *    context, no tools. With one: an agent with the six memory tools bound to this user and
 *    session and the system prompt (rules + context), run without a history of its own (the
 *    session reaches the model only through the context, as in the demo).
 * 5. Store the reply row in the session, with the turn's tool transcript (assistant
 *    `tool_calls` and `tool` results paired by `tool_call_id`) in its `meta.transcript`; then,
 *    in one transaction, the daily row (with the `{name, input, output}` projection) and the
 *    dialogue-log row (message, reply, the exact context sent, tool calls).
 * 6. Title: kept if the session has one; else made from this turn (offline: the first 12
 *    code points of the message; with an LLM: asked of it, falling back on error). Then the
 *    index entry is listed and its `updated_at` refreshed, in the commit of step 5 whenever the
 *    title is known by then (every turn but an LLM session's first).
 * 7. Answer `{reply, memoryHits (1 when the long-term document is non-empty, else 0), title,
 *    toolCalls}`.
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
 * Parallel turns on one session interleave their rows (ids stay unique and contiguous: the
 * MessageLog numbers them); turns on different sessions touch different keys.
 */
export interface ChatInput {
  userId: string;
  sessionId: string;
  message: string;
  /** Cancels the turn (see CANCELLING above). */
  signal?: AbortSignal;
}

export interface ChatResult {
  reply: string;
  /** 1 when the user's long-term memory was non-empty for this turn, else 0 (the demo's rule). */
  memoryHits: number;
  title: string;
  toolCalls: ToolCallView[];
}

const CONTEXT_ROWS = 6;

export async function chatTurn(deps: RecallDeps, input: ChatInput): Promise<ChatResult> {
  const userId = assertUserId(input?.userId);
  const sessionId = assertSessionId(input?.sessionId);
  const message = input.message;
  if (typeof message !== 'string') {
    throw new InvalidInputError('invalid_message', 'message must be a string', { field: 'message' });
  }
  const conversationId = sessionConversationId(userId, sessionId);
  const dbs = deps.dbs;
  const signal = input.signal;
  if (signal?.aborted) throw TurnInterruptedError.of(signal);

  const asked = localNow(deps);
  // Before any session row: this turn is in flight (a start after a kill mirrors what it left).
  await commit(dbs, () => {
    if (!sessionEntry(dbs, userId, sessionId)) {
      registerSession(dbs, userId, sessionId, asked.ts);
      startMirror(dbs, userId, sessionId);
    }
    rowsPending(dbs, userId, sessionId);
  });
  let userRecord: StoredMessage | undefined;
  try {
    await catchUpDaily(deps, userId, sessionId);
    [userRecord] = await deps.memory.append(conversationId, [
      { message: { role: 'user', content: message }, meta: { ts: asked.ts } },
    ]);
  } catch (err) {
    await commit(dbs, () => rowsSettled(dbs, userId, sessionId)).catch(() => undefined);
    throw err;
  }

  let transcript: Message[] = [];
  let memoryContext = '';
  let replied = false;
  try {
    await commit(dbs, () =>
      mirrorSessionRow(dbs, userId, sessionId, {
        day: asked.day,
        ts: asked.ts,
        role: 'user',
        content: message,
        session_id: sessionId,
        session_message_id: userRecord!.message_id,
      }),
    );

    const longTerm = currentLongTerm(dbs, userId);
    // The failed-turn rule (agent/failed-turns.ts): a failed turn is not sent to the model again.
    const session = dropFailedTurns(
      (await deps.memory.tail(conversationId, CONTEXT_ROWS)).map((r) => toSessionRow(r)),
      (row) => row.error !== undefined,
      (row) => row.role === 'user',
    );
    memoryContext = buildPromptContext({ session, daily: [], longTerm });

    let reply: string;
    if (deps.llm === undefined) {
      reply = fallbackReply(message, memoryContext, deps.language);
    } else {
      const agent = createAgent({
        llm: deps.llm,
        tools: turnTools(deps, userId, sessionId),
        systemPrompt: buildSystemPrompt(memoryContext, deps.language),
        memory: false,
        maxToolIterations: deps.maxToolIterations,
      });
      try {
        const run = await agent.run(message, signal ? { signal } : {});
        reply = typeof run.response.content === 'string' ? run.response.content : '';
        transcript = toolTranscript(run.messages.slice(1));
      } catch (err) {
        transcript = transcriptOfRecords(toolCallsOf(err));
        throw err;
      }
    }

    const toolCalls = projectToolCalls(transcript);
    const answered = localNow(deps);
    const [replyRecord] = await deps.memory.append(conversationId, [
      { message: { role: 'assistant', content: reply }, meta: replyMeta(answered.ts, transcript) },
    ]);
    replied = true;
    // The title is known after a session's first turn (and offline, always): then the index
    // update rides in the commit of the daily and log rows. Only a first turn with an LLM asks
    // for its title after that commit, so a slow title call holds back nothing durable.
    const knownTitle = sessionEntry(dbs, userId, sessionId)?.title || (deps.llm === undefined ? offlineTitle(message, deps.language) : '');
    let entry = await commit(dbs, () => {
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
      return knownTitle === '' ? undefined : touchSession(dbs, userId, sessionId, knownTitle, localNow(deps).ts);
    });
    if (entry === undefined) {
      const title = await generateTitle(deps.llm, message, reply, signal, deps.language);
      entry = await commit(dbs, () => touchSession(dbs, userId, sessionId, title, localNow(deps).ts));
    }
    return { reply, memoryHits: longTerm === '' ? 0 : 1, title: entry.title, toolCalls };
  } catch (caught) {
    const err = !replied && signal?.aborted ? TurnInterruptedError.of(signal, caught) : caught;
    if (!replied) {
      await recordFailure(deps, userId, sessionId, { message, memoryContext, transcript }, err).catch(() => undefined);
    }
    throw err;
  }
}

/** The tools of one turn, bound to its user and session. */
export function turnTools(deps: RecallDeps, userId: string, sessionId: string) {
  return createMemoryTools({
    rememberNote: async (note) => {
      await commit(deps.dbs, () => writeLongTerm(deps.dbs, userId, note, 'remember_note', localNow(deps).ts));
    },
    recentSession: (rounds) => recentSessionRows(deps, userId, sessionId, rounds),
    searchSession: (keyword, limit) => searchSessionRows(deps, userId, sessionId, keyword, limit),
    sessionWindow: (id, before, after) => sessionWindowRows(deps, userId, sessionId, id, before, after),
    searchDaily: (keyword, day, limit) => searchDailyRows(deps, userId, keyword, limit, day),
    dailyWindow: (id, before, after, day) => dailyWindowRows(deps, userId, id, before, after, day),
  });
}

async function recordFailure(
  deps: RecallDeps,
  userId: string,
  sessionId: string,
  turn: { message: string; memoryContext: string; transcript: Message[] },
  err: unknown,
): Promise<void> {
  const { message, memoryContext, transcript } = turn;
  const dbs = deps.dbs;
  const error: RowError = turnError(err);
  const toolCalls = projectToolCalls(transcript);
  const at = localNow(deps);
  const [record] = await deps.memory.append(sessionConversationId(userId, sessionId), [
    { message: { role: 'assistant', content: '' }, meta: { ...replyMeta(at.ts, transcript), error: { ...error } } },
  ]);
  await commit(dbs, () => {
    mirrorSessionRow(dbs, userId, sessionId, {
      day: at.day,
      ts: at.ts,
      role: 'assistant',
      content: '',
      session_id: sessionId,
      session_message_id: record!.message_id,
      error,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
    putLogRow(dbs, userId, sessionId, {
      ts: at.ts,
      session_id: sessionId,
      user_message: message,
      assistant_reply: '',
      memory_context: memoryContext,
      tool_calls: toolCalls,
      error,
    });
    rowsSettled(dbs, userId, sessionId);
    touchSession(dbs, userId, sessionId, offlineTitle(message, deps.language), at.ts);
  });
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
