import { InvalidInputError } from '../../errors.ts';
import { validateMessage } from '../../memory/contract/validate-message.ts';
import type { JsonObject, Message, StoredMessage } from '../../message.ts';
import { catchUpDaily, mirrorSessionRow, rowsPending, rowsSettled, startMirror } from '../store/daily-mirror.ts';
import { putLogRow } from '../store/dialogue-log.ts';
import { queueExtractionTx } from '../facts/fact-extraction.ts';
import { extractionLinkKey } from '../facts/extraction-worker.ts';
import type { ToolCallView } from '../store/memory-row.ts';
import { commit } from '../store/recall-dbs.ts';
import { appendWithCommit } from '../store/session-commit.ts';
import { offlineTitle } from '../store/session-title.ts';
import { projectToolCalls } from '../store/tool-call-projection.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId, sessionConversationId } from '../recall-ids.ts';
import { assertRoomForSession } from '../recall-limits.ts';
import { registerSession, sessionEntry, touchSession } from '../store/sessions-index.ts';
import { noteLink } from '../../telemetry/tracing.ts';

/**
 * `recall.recordTurn`: stores a turn whose reply was produced OUTSIDE recall (another agent
 * framework's model call, e.g. the AI SDK middleware, src/ai-sdk/): the user's message and the
 * reply, with the reply's tool calls, exactly where `chat` stores its own turns (chat-service.ts
 * steps 2, 5 and 6): the session's two rows, their daily rows, the ranked index (the stores'
 * hooks), the dialogue log, the extraction queue (with a facts model) and the sessions index;
 * with rolling summaries on, the session's summary check. No model is called: a session
 * without a title gets the offline one from the message (`offlineTitle`).
 *
 * Input is checked before anything is written (`InvalidInputError`, nothing stored): ids
 * follow recall-ids.ts (`invalid_id`); `message`, `reply` and `memoryContext` are strings and
 * `toolTranscript` a list of messages, each an assistant message with `tool_calls` or a `tool`
 * result (`invalid_message`, with the `field`). A new session counts against `sessionsPerUser`
 * (`session_limit`).
 *
 * Both rows are known, so they are one append: with the session store in recall's environment
 * (the runtime) the rows and every recall write of the turn are ONE commit (one fsync), all or
 * nothing; with another store, the in-flight mark commits first, the rows after it, then the
 * recall writes (a kill in between leaves the mark, and the next start mirrors the rows:
 * daily-mirror.ts).
 */
export interface RecordTurnInput {
  userId: string;
  sessionId: string;
  /** The user's message. */
  message: string;
  /** The assistant's final text; `''` for a reply that is tool calls only. */
  reply: string;
  /**
   * The reply's tool calls and their results, in order, in the chat-completions shape:
   * assistant messages with `tool_calls`, then `tool` messages with their `tool_call_id`
   * (what `chat` keeps as the reply row's `meta.transcript`). Default none.
   */
  toolTranscript?: readonly Message[];
  /** What the model was given as memory (kept in the dialogue log). Default `''`. */
  memoryContext?: string;
}

export interface RecordTurnResult {
  /** The session's title (kept, or made from this message). */
  title: string;
  /** The reply's tool calls as `chat` answers them. */
  toolCalls: ToolCallView[];
  /** The two rows' anchors in the session. */
  messageIds: { user: number; reply: number };
}

export async function recordTurn(deps: RecallDeps, input: RecordTurnInput): Promise<RecordTurnResult> {
  const userId = assertUserId(input?.userId);
  const sessionId = assertSessionId(input.sessionId);
  const message = text(input.message, 'message');
  const reply = text(input.reply, 'reply');
  const memoryContext = input.memoryContext === undefined ? '' : text(input.memoryContext, 'memoryContext');
  const transcript = checkTranscript(input.toolTranscript);
  const toolCalls = projectToolCalls(transcript);
  const conversationId = sessionConversationId(userId, sessionId);
  const dbs = deps.dbs;

  const asked = localNow(deps);
  if (sessionEntry(dbs, userId, sessionId)) await catchUpDaily(deps, userId, sessionId);
  else assertRoomForSession(dbs, userId, deps.limits.sessionsPerUser);
  const opening = () => {
    if (!sessionEntry(dbs, userId, sessionId)) {
      registerSession(dbs, userId, sessionId, asked.ts);
      startMirror(dbs, userId, sessionId);
    }
    rowsPending(dbs, userId, sessionId);
  };
  if (!deps.sharedCommits) await commit(dbs, opening);
  const title = sessionEntry(dbs, userId, sessionId)?.title || offlineTitle(message, deps.language);
  const meta: JsonObject = transcript.length > 0 ? { ts: asked.ts, transcript: transcript as unknown as JsonObject[] } : { ts: asked.ts };
  let rows: StoredMessage[];
  try {
    [rows] = await appendWithCommit(
      deps,
      conversationId,
      [
        { message: { role: 'user', content: message }, meta: { ts: asked.ts } },
        { message: { role: 'assistant', content: reply }, meta },
      ],
      ([userRow, replyRow]) => {
        if (deps.sharedCommits) opening();
        const replyId = replyRow!.message_id;
        const row = { day: asked.day, ts: asked.ts, session_id: sessionId };
        mirrorSessionRow(dbs, userId, sessionId, { ...row, role: 'user', content: message, session_message_id: userRow!.message_id });
        mirrorSessionRow(dbs, userId, sessionId, { ...row, role: 'assistant', content: reply, session_message_id: replyId, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) });
        putLogRow(dbs, userId, sessionId, { ts: asked.ts, session_id: sessionId, user_message: message, assistant_reply: reply, memory_context: memoryContext, tool_calls: toolCalls });
        rowsSettled(dbs, userId, sessionId);
        if (deps.factsLlm !== undefined) {
          queueExtractionTx(dbs, userId, sessionId, replyId, { user_message: message, assistant_reply: reply, message_ids: [userRow!.message_id, replyId], queued_at: asked.ts });
        }
        touchSession(dbs, userId, sessionId, title, asked.ts);
      },
    );
  } catch (error) {
    if (!deps.sharedCommits) await commit(dbs, () => rowsSettled(dbs, userId, sessionId)).catch(() => undefined);
    throw error;
  }
  const [userRecord, replyRecord] = rows;
  if (deps.factsLlm !== undefined) noteLink(extractionLinkKey([userId, sessionId, replyRecord!.message_id]));
  deps.kickExtraction?.();
  deps.summarizer?.afterTurn(conversationId);
  return { title, toolCalls, messageIds: { user: userRecord!.message_id, reply: replyRecord!.message_id } };
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidInputError('invalid_message', `${field} must be a string`, { field });
  return value;
}

/** Tool calls and their results only: the turn's own two rows are the message and the reply. */
function checkTranscript(value: unknown): Message[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidInputError('invalid_message', 'toolTranscript must be a list of messages', { field: 'toolTranscript' });
  return value.map((m, index) => {
    const checked = validateMessage(m, index);
    const toolish = checked.role === 'tool' || (checked.role === 'assistant' && (checked.tool_calls?.length ?? 0) > 0);
    if (!toolish) {
      throw new InvalidInputError('invalid_message', 'toolTranscript holds assistant messages with tool_calls and tool results only', { field: 'toolTranscript', index });
    }
    return checked;
  });
}
