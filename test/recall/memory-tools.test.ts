import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/kernel/tool.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';

function tools(): Record<string, Tool> {
  return Object.fromEntries(fx!.recall.memoryTools(U, 's').map((t) => [t.name, t]));
}

async function run(name: string, args: Record<string, unknown>): Promise<unknown> {
  return tools()[name]!.execute(args as never, {} as never);
}

describe("the demo's six memory tools", () => {
  it('names, descriptions, arguments and defaults', () => {
    fx = openRecall();
    const t = tools();
    expect(Object.keys(t)).toEqual(['remember_note', 'get_recent_session', 'search_session', 'get_session_window', 'search_daily', 'get_daily_window', 'remember', 'update_memory', 'forget', 'search_memory']);
    expect(t['search_session']!.description).toBe('Search session history by keyword and return message_id anchors for follow-up window lookups.');
    expect(t['get_session_window']!.description).toBe('Fetch session messages around a message_id anchor. Use after search_session to expand context.');
    expect(t['search_daily']!.description).toBe('Search daily history by keyword. Optional day=YYYY-MM-DD; empty/invalid day falls back to all days.');
    expect(t['get_daily_window']!.description).toBe('Fetch daily messages around a message_id anchor. Use after search_daily to expand context.');
    expect(t['remember_note']!.description).toBe('Overwrite memory.md with the latest full-memory text. The input must be complete, not incremental.');
    expect(t['get_recent_session']!.description).toBe('Fetch the latest session history by rounds (1 round ~= user+assistant messages).');
    const props = (name: string) => (t[name]!.parameters as { properties: Record<string, { default?: unknown }> }).properties;
    expect(props('remember_note')['tags']!.default).toBe('preference,fact');
    expect(props('get_recent_session')['rounds']!.default).toBe(3);
    expect(props('search_session')['limit']!.default).toBe(20);
    expect(props('search_daily')['limit']!.default).toBe(50);
    expect(props('search_daily')['day']!.default).toBe('');
    expect(props('get_daily_window')['day']!.default).toBe('');
    expect((t['get_session_window']!.parameters as { required: string[] }).required).toEqual(['message_id']);
  });

  it('empty results have the demo strings', async () => {
    fx = openRecall();
    expect(await run('get_recent_session', {})).toBe('no session history');
    expect(await run('search_session', { keyword: 'x' })).toBe('no matched session messages');
    expect(await run('get_session_window', { message_id: 1 })).toBe('no window messages');
    expect(await run('search_daily', { keyword: 'x' })).toBe('no matched daily messages');
    expect(await run('get_daily_window', { message_id: 1 })).toBe('no window messages');
  });

  it('rows print as "#id ts | role: content", one per line', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: '我的生日是五月三号' });
    expect(await run('search_session', { keyword: '生日' })).toBe(
      '#1 2026-04-08T10:00:00 | user: 我的生日是五月三号\n#2 2026-04-08T10:00:00 | assistant: 收到：我的生日是五月三号。我已经记录到记忆中。',
    );
    expect(await run('get_session_window', { message_id: '2', before: 1 })).toBe(
      '#1 2026-04-08T10:00:00 | user: 我的生日是五月三号\n#2 2026-04-08T10:00:00 | assistant: 收到：我的生日是五月三号。我已经记录到记忆中。',
    );
  });

  it('search_daily names the day of each hit unless one day was asked for', async () => {
    fx = openRecall();
    fx.clock.set('2026-04-07T12:00:00+08:00');
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'swim' });
    expect(await run('search_daily', { keyword: 'swim', limit: 1 })).toBe(
      '#2 [2026-04-07] 2026-04-07T12:00:00 | assistant: 收到：swim。我已经记录到记忆中。',
    );
    expect(await run('search_daily', { keyword: 'swim', day: '2026-04-07', limit: 1 })).toBe(
      '#2 2026-04-07T12:00:00 | assistant: 收到：swim。我已经记录到记忆中。',
    );
    expect(await run('get_daily_window', { message_id: 1, day: '2026-04-07' })).toBe('#1 2026-04-07T12:00:00 | user: swim');
    fx.clock.set('2026-04-08T12:00:00+08:00');
    expect(await run('get_daily_window', { message_id: 1 })).toBe('no window messages');
  });

  it('search_session clamps its limit to 1..100, search_daily to 1..200', async () => {
    fx = openRecall();
    const rows = Array.from({ length: 150 }, (_, i) => ({ message: { role: 'user' as const, content: `m${i}` }, meta: { ts: 't' } }));
    await fx.memory.append('session/u/s', rows);
    expect(String(await run('search_session', { keyword: 'm', limit: 500 })).split('\n')).toHaveLength(100);
    expect(String(await run('search_session', { keyword: 'm', limit: 0 })).split('\n')).toHaveLength(1);
    expect(String(await run('search_session', { keyword: 'm', limit: '7' })).split('\n')).toHaveLength(7);
  });

  it('arguments the model garbles take their defaults', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'a' });
    expect(String(await run('get_recent_session', { rounds: 'lots' })).split('\n')).toHaveLength(2);
    expect(await run('get_session_window', { message_id: 1, before: 'x', after: null })).toBe('#1 2026-04-08T10:00:00 | user: a');
    expect(await run('search_session', {})).toContain('#1');
  });
});
