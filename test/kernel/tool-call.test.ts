import { describe, expect, it } from 'vitest';
import { encodeResult, encodeToolError, fromResponse, newConversationId, parseToolCall, ToolNotFoundError } from '../../src/kernel/index.ts';

describe('parseToolCall (beamai parse_tool_call)', () => {
  it('reads the OpenAI nested shape with JSON-string arguments', () => {
    expect(parseToolCall({ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } })).toEqual({
      id: 'c1', name: 'f', args: { a: 1 },
    });
  });

  it('reads the nested shape with object arguments', () => {
    expect(parseToolCall({ id: 'c1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }).args).toEqual({ a: 1 });
  });

  it('reads the flat shape', () => {
    expect(parseToolCall({ id: 'c2', name: 'g', arguments: { b: [1, 2] } })).toEqual({ id: 'c2', name: 'g', args: { b: [1, 2] } });
  });

  it('names a missing id or name "unknown"', () => {
    expect(parseToolCall({ function: { arguments: '{}' } })).toEqual({ id: 'unknown', name: 'unknown', args: {} });
  });

  it('keeps undecodable argument text as {raw}', () => {
    expect(parseToolCall({ id: 'c', name: 'f', arguments: '{not json' }).args).toEqual({ raw: '{not json' });
  });

  it('keeps argument text that decodes to a non-object as {raw}', () => {
    expect(parseToolCall({ id: 'c', name: 'f', arguments: '[1,2]' }).args).toEqual({ raw: '[1,2]' });
  });

  it('reads empty argument text as {}', () => {
    expect(parseToolCall({ id: 'c', name: 'f', arguments: '' }).args).toEqual({});
  });

  it('reads any other arguments as {}', () => {
    expect(parseToolCall({ id: 'c', name: 'f', arguments: 42 }).args).toEqual({});
    expect(parseToolCall(null)).toEqual({ id: 'unknown', name: 'unknown', args: {} });
  });
});

describe('encodeResult (beamai encode_result)', () => {
  it('passes strings through', () => expect(encodeResult('plain')).toBe('plain'));
  it('encodes objects and arrays as JSON', () => {
    expect(encodeResult({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(encodeResult([1, 2])).toBe('[1,2]');
  });
  it('encodes numbers, booleans and nothing as their JSON text', () => {
    expect(encodeResult(42)).toBe('42');
    expect(encodeResult(true)).toBe('true');
    expect(encodeResult(undefined)).toBe('null');
  });
  it('falls back to String() for values JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(encodeResult(cyclic)).toBe('[object Object]');
    expect(encodeResult(10n)).toBe('10');
  });
  it('encodes a thrown Error as {"error": {type, message}}, with the code of a MnemoError', () => {
    expect(JSON.parse(encodeToolError(new Error('disk full')))).toEqual({ error: { type: 'tool_error', message: 'disk full' } });
    expect(JSON.parse(encodeToolError(new ToolNotFoundError('x')))).toEqual({ error: { type: 'tool_not_found', message: 'tool not found: x' } });
  });
  it('encodes any other thrown value as {"error": value}', () => {
    expect(JSON.parse(encodeToolError({ reason: 'nope' }))).toEqual({ error: { reason: 'nope' } });
  });
});

describe('fromResponse (beamai from_response)', () => {
  const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };

  it('stores a text reply as an assistant message, exactly', () => {
    expect(fromResponse({ content: 'hello', finish_reason: 'stop' })).toEqual({ role: 'assistant', content: 'hello' });
  });
  it('lets tool calls win over text: the text is dropped', () => {
    expect(fromResponse({ content: 'let me look', tool_calls: [call] })).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
  });
  it('stores nothing for a null reply', () => {
    expect(fromResponse({ content: null })).toBeUndefined();
    expect(fromResponse({ content: null, tool_calls: [] })).toBeUndefined();
  });
  it('keeps content_blocks', () => {
    const blocks = [{ type: 'thinking', thinking: 't', signature: 's' }];
    expect(fromResponse({ content: 'x', content_blocks: blocks })).toEqual({ role: 'assistant', content: 'x', content_blocks: blocks });
    expect(fromResponse({ content: null, tool_calls: [call], content_blocks: blocks })?.content_blocks).toEqual(blocks);
  });
});

describe('newConversationId', () => {
  it('has the form conv_<12 hex ms>_<20 hex random>', () => {
    const id = newConversationId(0x18f2a3b4c5d);
    expect(id).toMatch(/^conv_[0-9a-f]{12}_[0-9a-f]{20}$/);
    expect(id.slice(5, 17)).toBe('018f2a3b4c5d');
    expect(newConversationId()).not.toBe(newConversationId());
  });
});
