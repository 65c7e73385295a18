import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/message.ts';
import { safeWindow } from '../../src/provider/index.ts';

const sys = (c: string): Message => ({ role: 'system', content: c });
const user = (c: string): Message => ({ role: 'user', content: c });
const asst = (c: string): Message => ({ role: 'assistant', content: c });
const calls = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
});
const tool = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: `r${id}` });

describe('safeWindow (beamai safe_window/2)', () => {
  it('keeps only the last N non-system messages', () => {
    const ms = [user('u1'), asst('a1'), user('u2'), asst('a2'), user('u3')];
    expect(safeWindow(ms, 3)).toEqual([user('u2'), asst('a2'), user('u3')]);
  });

  it('returns everything when there are N or fewer messages', () => {
    const ms = [user('u1'), asst('a1')];
    expect(safeWindow(ms, 2)).toEqual(ms);
    expect(safeWindow(ms, 10)).toEqual(ms);
  });

  it('keeps every system message and does not count them against N', () => {
    const ms = [sys('s1'), user('u1'), asst('a1'), user('u2')];
    expect(safeWindow(ms, 2)).toEqual([sys('s1'), asst('a1'), user('u2')]);
  });

  it('hoists system messages found in the middle to the head, in their original order', () => {
    const ms = [user('u1'), sys('s1'), asst('a1'), sys('s2'), user('u2')];
    expect(safeWindow(ms, 10)).toEqual([sys('s1'), sys('s2'), user('u1'), asst('a1'), user('u2')]);
  });

  it('drops a leading orphan tool message left by the cut', () => {
    const ms = [user('u1'), calls('c1'), tool('c1'), asst('a1'), user('u2')];
    // the last 3 start at the tool result whose call was cut off
    expect(safeWindow(ms, 3)).toEqual([asst('a1'), user('u2')]);
  });

  it('drops leading tool messages even when nothing was cut ([tool, user] with N=5 gives [user])', () => {
    expect(safeWindow([tool('c1'), user('u1')], 5)).toEqual([user('u1')]);
  });

  it('can return fewer than N messages ([A1, T1, U2] with N=2 gives [U2])', () => {
    expect(safeWindow([asst('a1'), tool('c1'), user('u2')], 2)).toEqual([user('u2')]);
  });

  it('drops a whole leading batch of tool results', () => {
    const ms = [user('u1'), calls('c1', 'c2', 'c3'), tool('c1'), tool('c2'), tool('c3'), asst('a1')];
    expect(safeWindow(ms, 3)).toEqual([asst('a1')]);
  });

  it('keeps an assistant tool-call turn at the head even though the cut left it there', () => {
    const ms = [user('u1'), calls('c1'), tool('c1'), asst('a1')];
    expect(safeWindow(ms, 3)).toEqual([calls('c1'), tool('c1'), asst('a1')]);
  });

  it('keeps a trailing assistant tool-call turn without results', () => {
    const ms = [user('u1'), calls('c1')];
    expect(safeWindow(ms, 2)).toEqual([user('u1'), calls('c1')]);
  });

  it('treats a message without a role as neither system nor tool', () => {
    const odd = { content: 'x' } as unknown as Message;
    expect(safeWindow([odd, user('u1')], 5)).toEqual([odd, user('u1')]);
  });

  it('does not change its input', () => {
    const ms = [user('u1'), sys('s1'), asst('a1')];
    const copy = structuredClone(ms);
    safeWindow(ms, 1);
    expect(ms).toEqual(copy);
  });
});
