/**
 * Messages use the OpenAI chat-completions shape, plus beamai's optional `content_blocks`
 * (provider-native blocks such as thinking, kept so replayed history stays prompt-cacheable).
 * A message round-trips through every store exactly, extra JSON fields included.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** A tool call on an assistant message (OpenAI's shape). */
export interface ToolCall {
  /** The call's id; its result answers it (`ToolMessage.tool_call_id`). */
  id: string;
  /** Always `'function'`. */
  type: 'function';
  /** Which tool, with what. */
  function: {
    /** The tool's name. */
    name: string;
    /** The arguments as the model wrote them: a JSON text (not checked). */
    arguments: string;
  };
}

/** Provider-native content block (`{type: 'thinking', thinking, signature}`, ...). */
export type ContentBlock = {
  /** The block's kind (`'thinking'`, `'redacted_thinking'`, ...). */
  type: string;
} & JsonObject;

/** Multi-part user content (`{type: 'text', text}`, `{type: 'image_url', ...}`). */
export type ContentPart = {
  /** The part's kind (`'text'`, `'image_url'`, ...). */
  type: string;
} & JsonObject;

/** Instructions for the model. */
export interface SystemMessage {
  /** Always `'system'`. */
  role: 'system';
  /** The instructions. */
  content: string;
  /** An optional participant name. */
  name?: string;
}

/** What the user said. */
export interface UserMessage {
  /** Always `'user'`. */
  role: 'user';
  /** Text, or parts (text, images). */
  content: string | ContentPart[];
  /** An optional participant name. */
  name?: string;
}

/** What the model answered. */
export interface AssistantMessage {
  /** Always `'assistant'`. */
  role: 'assistant';
  /** `null` on a turn that only calls tools. */
  content: string | null;
  /** The tools it called. */
  tool_calls?: ToolCall[];
  /** Provider-native blocks of the reply, replayed as they were. */
  content_blocks?: ContentBlock[];
  /** An optional participant name. */
  name?: string;
}

/** A tool's result, answering one call. */
export interface ToolMessage {
  /** Always `'tool'`. */
  role: 'tool';
  /** The result, as text. */
  content: string;
  /** The id of the call it answers. */
  tool_call_id: string;
  /** The tool's name. */
  name?: string;
}

/** One chat message (a union on `role`). */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
/** A message's role: `'system'`, `'user'`, `'assistant'` or `'tool'`. */
export type Role = Message['role'];

/** Free-form metadata kept beside a stored message (never sent to an LLM). */
export type Meta = JsonObject;

/** A message as a store holds it: the message plus its id within the conversation. */
export interface StoredMessage {
  /** 1, 2, 3, ... per conversation, no gap and no duplicate; restarts at 1 after `clear`. */
  message_id: number;
  /** When it was committed, ISO 8601 with offset. */
  ts: string;
  /** The metadata stored with it (`{}` when none). */
  meta: Meta;
  /** The message, exactly as appended. */
  message: Message;
}
