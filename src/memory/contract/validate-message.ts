import { InvalidInputError } from '../../errors.ts';
import { copyJson } from './json-value.ts';
import type { JsonObject, Message, Role } from '../../message.ts';

/**
 * The message contract every store enforces before anything is written. A message is a plain
 * JSON object in the chat-completions shape (see message.ts):
 *
 * - `role` is `system`, `user`, `assistant` or `tool`;
 * - `content` is present: a string; for `user` also an array of parts (`{type: string, ...}`);
 *   for `assistant` also `null` (a turn that only calls tools);
 * - `tool_calls` (assistant only): `[{id: string, type: 'function', function: {name: string,
 *   arguments: string}}]`; `content_blocks` (assistant only): `[{type: string, ...}]`;
 * - `tool_call_id` is a non-empty string on a tool message and absent elsewhere; `name` is a
 *   string when present;
 * - every other field is kept as given, provided it is JSON (see json-value.ts).
 *
 * A bad message throws `InvalidInputError('invalid_message')` whose details say which message
 * (`index` in its batch), which `field` and why.
 */
const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);

export function validateMessage(value: unknown, index: number): Message {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(index, 'message', 'is not an object');
  const copy = copyJson(value, 'message');
  if (!copy.ok) return invalid(index, copy.path, `is not JSON: ${copy.reason}`);
  const m = copy.value as JsonObject;

  const role = m['role'];
  if (typeof role !== 'string' || !ROLES.has(role)) invalid(index, 'role', 'must be one of system, user, assistant, tool');
  if (!('content' in m)) invalid(index, 'content', 'is missing');
  const content = m['content'];
  switch (role as Role) {
    case 'system':
    case 'tool':
      if (typeof content !== 'string') invalid(index, 'content', 'must be a string');
      break;
    case 'user':
      if (typeof content !== 'string' && !isTypedList(content)) invalid(index, 'content', 'must be a string or a list of {type} parts');
      break;
    case 'assistant':
      if (typeof content !== 'string' && content !== null) invalid(index, 'content', 'must be a string or null');
      break;
  }

  if ('tool_calls' in m) {
    if (role !== 'assistant') invalid(index, 'tool_calls', 'is only allowed on assistant messages');
    const calls = m['tool_calls'];
    if (!Array.isArray(calls)) return invalid(index, 'tool_calls', 'must be a list');
    calls.forEach((call, i) => {
      const at = `tool_calls[${i}]`;
      if (!isObject(call)) return invalid(index, at, 'is not an object');
      if (typeof call['id'] !== 'string') invalid(index, `${at}.id`, 'must be a string');
      if (call['type'] !== 'function') invalid(index, `${at}.type`, "must be 'function'");
      const fn = call['function'];
      if (!isObject(fn)) return invalid(index, `${at}.function`, 'must be an object');
      if (typeof fn['name'] !== 'string') invalid(index, `${at}.function.name`, 'must be a string');
      if (typeof fn['arguments'] !== 'string') invalid(index, `${at}.function.arguments`, 'must be a string (JSON text)');
    });
  }
  if ('content_blocks' in m) {
    if (role !== 'assistant') invalid(index, 'content_blocks', 'is only allowed on assistant messages');
    if (!isTypedList(m['content_blocks'])) invalid(index, 'content_blocks', 'must be a list of {type} blocks');
  }
  if (role === 'tool') {
    const id = m['tool_call_id'];
    if (typeof id !== 'string' || id === '') invalid(index, 'tool_call_id', 'must be a non-empty string on a tool message');
  } else if ('tool_call_id' in m) {
    invalid(index, 'tool_call_id', 'is only allowed on tool messages');
  }
  if ('name' in m && typeof m['name'] !== 'string') invalid(index, 'name', 'must be a string');
  return m as unknown as Message;
}

function invalid(index: number, field: string, reason: string): never {
  throw new InvalidInputError('invalid_message', `message ${index}: ${field} ${reason}`, { index, field, reason });
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isTypedList(v: unknown): boolean {
  return Array.isArray(v) && v.every((part) => isObject(part) && typeof part['type'] === 'string');
}
