import { InvalidInputError } from '../../errors.ts';
import { languageOf } from '../../language.ts';
import { validateMessage } from '../../memory/contract/validate-message.ts';
import type { JsonObject, Message } from '../../message.ts';
import { linkTo, noteLink } from '../../telemetry/tracing.ts';
import { summaryLinkKey } from '../../provider/summarizer.ts';
import { extractionLinkKey } from '../jobs/extraction-worker.ts';
import type { ToolCallView } from '../rows/row-types.ts';
import { offlineTitle } from '../rows/session-title.ts';
import { projectToolCalls } from '../rows/tool-call-projection.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId, sessionConversationId } from '../recall-ids.ts';
import { assertRoomForSession } from '../recall-limits.ts'; 

/**
 * `recall.recordTurn`: stores a turn whose reply was produced OUTSIDE recall (another agent
 * framework's model call, e.g. the AI SDK middleware, src/ai-sdk/): the user's message and the
 * reply, with the reply's tool calls, exactly where `chat` stores its own turns (chat-service.ts
 * steps 2, 5 and 6): the session's two rows, their daily rows, the ranked index (the stores'
 * hooks), the dialogue log, the extraction queue (with a facts model) and the sessions index;
 * with rolling summaries on, the session's `summarize` job when it is due. No model is called: a session
 * without a title gets the offline one from the message (`offlineTitle`).
 *
 * Input is checked before anything is written (`InvalidInputError`, nothing stored): ids
 * follow recall-ids.ts (`invalid_id`); `message`, `reply` and `memoryContext` are strings and
 * `toolTranscript` a list of messages, each an assistant message with `tool_calls` or a `tool`
 * result (`invalid_message`, with the `field`). A new session counts against `sessionsPerUser`
 * (`session_limit`).
 *
 * Both rows are known, so they are one `appendTurn` of the store: the rows and every recall
 * write of the turn commit together (LMDB: one commit, one fsync; PostgreSQL: one transaction),
 * all or nothing. The turn holds its session like a chat turn (`lockSession`), so it never
 * interleaves with another turn of the session, in any process sharing the store.
 */
export interface RecordTurnInput {
  /** The user. */
  userId: string;
  /** The session the turn is stored in (made when new). */
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

/** What `recordTurn` resolves with. */
export interface RecordTurnResult {
  /** The session's title (kept, or made from this message). */
  title: string;
  /** The reply's tool calls as `chat` answers them. */
  toolCalls: ToolCallView[];
  /** The two rows' anchors in the session. */
  messageIds: {
    /** The user message's id. */
    user: number;
    /** The reply's id. */
    reply: number;
  };
}

export async function recordTurn(deps: RecallDeps, input: RecordTurnInput): Promise<RecordTurnResult> {
  const userId = assertUserId(input?.userId);
  const sessionId = assertSessionId(input.sessionId);
  const message = text(input.message, 'message');
  const reply = text(input.reply, 'reply');
  const memoryContext = input.memoryContext === undefined ? '' : text(input.memoryContext, 'memoryContext');
  const transcript = checkTranscript(input.toolTranscript);
  const toolCalls = projectToolCalls(transcript);
  const unlock = await deps.store.lockSession(userId, sessionId);
  try {
    const known = await deps.store.session(userId, sessionId);
    if (known === undefined) assertRoomForSession(await deps.store.sessions(userId), deps.limits.sessionsPerUser);
    const asked = localNow(deps);
    const title = known?.title || offlineTitle(message, languageOf(deps.language, message));
    // Whether the session's older part is due for a summary: then its job rides in this commit.
    const summarize = deps.summary !== undefined && (await deps.summary.reader.due(sessionConversationId(userId, sessionId)));
    const meta: JsonObject = transcript.length > 0 ? { ts: asked.ts, transcript: transcript as unknown as JsonObject[] } : { ts: asked.ts };
    const row = { day: asked.day, ts: asked.ts, sessionId };
    // The turn's span is looked up only for a job to link to it.
    const turnSpan = deps.factsLlm !== undefined || summarize ? linkTo() : undefined;
    const { records } = await deps.store.appendTurn({
      userId,
      sessionId,
      entries: [
        { message: { role: 'user', content: message }, meta: { ts: asked.ts } },
        { message: { role: 'assistant', content: reply }, meta },
      ],
      opens: { now: asked.ts },
      with: ([userRow, replyRow]) => {
        const messageIds = [userRow!.message_id, replyRow!.message_id];
        // Noted before the job commits, so its span (telemetry/tracing.ts) finds the turn's to link to.
        if (deps.factsLlm !== undefined) noteLink(extractionLinkKey(userId, { sessionId, replyId: messageIds[1]! }), turnSpan);
        if (summarize) noteLink(summaryLinkKey(sessionConversationId(userId, sessionId)), turnSpan);
        return {
          daily: [
            { ...row, role: 'user', content: message, sessionMessageId: messageIds[0]! },
            { ...row, role: 'assistant', content: reply, sessionMessageId: messageIds[1]!, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
          ],
          log: { ts: asked.ts, sessionId, userMessage: message, assistantReply: reply, memoryContext, toolCalls },
          settles: true,
          jobs: [
            ...(deps.factsLlm === undefined ? [] : [{ kind: 'extract' as const, userId, payload: { sessionId, replyId: messageIds[1]!, userMessage: message, assistantReply: reply, messageIds } }]),
            ...(summarize ? [{ kind: 'summarize' as const, userId, payload: { sessionId } }] : []),
          ],
          touch: { title, updatedAt: asked.ts },
        };
      },
    });
    const [userRecord, replyRecord] = records;
    return { title, toolCalls, messageIds: { user: userRecord!.message_id, reply: replyRecord!.message_id } };
  } finally {
    await unlock();
  }
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
