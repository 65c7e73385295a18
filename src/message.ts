/**
 * Messages use the OpenAI chat-completions shape, plus beamai's optional `content_blocks`
 * (provider-native blocks such as thinking, kept so replayed history stays prompt-cacheable).
 * A message round-trips through every store exactly, extra JSON fields included.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Provider-native content block (`{type: 'thinking', thinking, signature}`, ...). */
export type ContentBlock = { type: string } & JsonObject;

/** Multi-part user content (`{type: 'text', text}`, `{type: 'image_url', ...}`). */
export type ContentPart = { type: string } & JsonObject;

export interface SystemMessage {
  role: 'system';
  content: string;
  name?: string;
}

export interface UserMessage {
  role: 'user';
  content: string | ContentPart[];
  name?: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** `null` on a turn that only calls tools. */
  content: string | null;
  tool_calls?: ToolCall[];
  content_blocks?: ContentBlock[];
  name?: string;
}

export interface ToolMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
  name?: string;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type Role = Message['role'];

/** Free-form metadata kept beside a stored message (never sent to an LLM). */
export type Meta = JsonObject;

/** A message as a store holds it: the message plus its id within the conversation. */
export interface StoredMessage {
  /** 1, 2, 3, ... per conversation, no gap and no duplicate; restarts at 1 after `clear`. */
  message_id: number;
  /** When it was committed, ISO 8601 with offset. */
  ts: string;
  meta: Meta;
  message: Message;
}
