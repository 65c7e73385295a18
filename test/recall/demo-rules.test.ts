import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { isCalendarDay } from '../../src/recall/rows/calendar-day.ts';
import { generateTitle, offlineTitle } from '../../src/recall/rows/session-title.ts';
import { collectNewestMatches, clampLimit } from '../../src/recall/search/keyword-search.ts';
import { backfillMessageIds, parseMessageId } from '../../src/recall/rows/legacy-message-id.ts';
import { localTimeIn } from '../../src/recall/rows/local-time.ts';
import { buildPromptContext } from '../../src/recall/chat/prompt-context.ts';
import { pythonJsonDumps } from '../../src/recall/rows/python-json.ts';
import { assertSessionId, assertUserId, newSessionId, sessionConversationId } from '../../src/recall/recall-ids.ts';
import { decodeFolderName, encodeFolderName } from '../../src/recall/demo-folder/folder-name.ts';
import { formatDailyRow, formatRows } from '../../src/recall/chat/row-format.ts';
import { sliceWindow, windowSpec } from '../../src/recall/rows/row-window.ts';
import { buildSystemPrompt } from '../../src/recall/chat/system-prompt.ts';
import { projectToolCalls } from '../../src/recall/rows/tool-call-projection.ts';
import { fallbackLlm } from '../../src/llm/fallback-llm.ts';
import { scriptedLlm, says, toolCall } from '../support/scripted-llm.ts';

describe('ids', () => {
  it.each(['a\u0000b', 'a\nb', 'a\u007fb', '', 'x'.repeat(129), '张'.repeat(129), ' a', 'a ', '\u3000a', 'a\ud800', '\u{10FFFF}', 'a\ufffe', '.', '..'])('%j is refused with invalid_id', (bad) => {
    expect(() => assertUserId(bad)).toThrow(InvalidInputError);
    try {
      assertSessionId(bad);
    } catch (e) {
      expect((e as InvalidInputError).code).toBe('invalid_id');
    }
  });

  it('non-strings are refused with invalid_id', () => {
    expect(() => assertUserId(42)).toThrow(expect.objectContaining({ code: 'invalid_id' }));
  });

  it.each(['demo-user_1', 'alice.smith', 'alice@example.com', '张三', 'a b', 'a/b', '...', '.a', '../x', 'a\\b', 'é', '🙂', 'x'.repeat(128), '𠀀'.repeat(128)])(
    '%j is an id (1-128 characters, no control character, no edge space)',
    (good) => {
      expect(assertUserId(good)).toBe(good);
      expect(assertSessionId(good)).toBe(good);
    },
  );

  it('a conversation id names one (user, session) pair only, even with slashes and percent signs', () => {
    const pairs: [string, string][] = [['a/b', 'c'], ['a', 'b/c'], ['a%2Fb', 'c'], ['a', '%2Fb/c'], ['a%', '2Fb'], ['张', '三'.repeat(128)], ['𠀀'.repeat(128), '𠀀'.repeat(128)], ['𠀀'.repeat(128), '𠀀'.repeat(127) + '𠀁']];
    const ids = pairs.map(([u, s]) => sessionConversationId(u, s));
    expect(new Set(ids).size).toBe(pairs.length);
    for (const id of ids) expect(Buffer.byteLength(id, 'utf8')).toBeLessThanOrEqual(512);
    // Ids of the old alphabet keep the conversation ids they had.
    expect(sessionConversationId('demo-user', 's1')).toBe('session/demo-user/s1');
  });

  it('a folder name encodes /, \\, %, a leading dot and the other unsafe characters, and decodes back', () => {
    for (const id of ['demo-user', '张三', 'alice.smith', 'a b', 'a@b.com']) expect(encodeFolderName(id)).toBe(id);
    expect(encodeFolderName('..')).toBe('%2E.');
    expect(encodeFolderName('../x')).toBe('%2E.%2Fx');
    expect(encodeFolderName('a\\b:c%')).toBe('a%5Cb%3Ac%25');
    for (const id of ['..', '../x', '.hidden', 'a\\b', '50%', 'a/张/b', 'x<>|?*"']) {
      const name = encodeFolderName(id);
      expect(name).not.toMatch(/[/\\]|^\./);
      expect(decodeFolderName(name)).toBe(id);
    }
    // Only canonical names decode, so two names never give one id.
    for (const name of ['%2e.', '%41', '50%', '%zz', '%E4', '.x', 'a/b']) expect(decodeFolderName(name)).toBeNull();
  });

  it('a new session id is 12 lowercase hex digits', () => {
    expect(newSessionId()).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('local time', () => {
  it('ts and day are the wall time of the configured zone', () => {
    const at = Date.parse('2026-04-08T23:59:59+08:00');
    expect(localTimeIn('Asia/Shanghai')(at)).toEqual({ day: '2026-04-08', ts: '2026-04-08T23:59:59' });
    expect(localTimeIn('UTC')(at)).toEqual({ day: '2026-04-08', ts: '2026-04-08T15:59:59' });
    expect(localTimeIn('Asia/Shanghai')(at + 1000).day).toBe('2026-04-09');
  });

  it('midnight is 00, not 24', () => {
    expect(localTimeIn('UTC')(Date.parse('2026-01-01T00:00:00Z')).ts).toBe('2026-01-01T00:00:00');
  });

  it('an unknown zone is refused with invalid_option', () => {
    expect(() => localTimeIn('Mars/Olympus')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('is exact per second through one formatter, across a DST jump and a clock that steps back', () => {
    const berlin = localTimeIn('Europe/Berlin');
    const before = Date.UTC(2026, 2, 29, 0, 59, 59); // 01:59:59 CET; the next second is 03:00:00 CEST
    expect(berlin(before).ts).toBe('2026-03-29T01:59:59');
    expect(berlin(before + 999).ts).toBe('2026-03-29T01:59:59');
    expect(berlin(before + 1000).ts).toBe('2026-03-29T03:00:00');
    expect(berlin(before + 1001).ts).toBe('2026-03-29T03:00:00');
    expect(berlin(before).ts).toBe('2026-03-29T01:59:59'); // back again: not the last answer
    expect(berlin(Date.UTC(2026, 9, 25, 0, 59, 59)).ts).toBe('2026-10-25T02:59:59'); // CEST's last second
    expect(berlin(Date.UTC(2026, 9, 25, 1, 0, 0)).ts).toBe('2026-10-25T02:00:00'); // CET again
  });
});

describe('day filter', () => {
  it('only YYYY-MM-DD naming a real date is a day', () => {
    expect(isCalendarDay('2026-04-08')).toBe(true);
    expect(isCalendarDay('2024-02-29')).toBe(true);
    for (const bad of ['2026-02-29', '2026-4-8', '20260408', '2026-W15', '2026-04-08T10:00', 'bad', '2026-13-01', '0000-01-01']) {
      expect(isCalendarDay(bad), bad).toBe(false);
    }
  });
});

describe('message_id parsing and back-fill (reference §3.1)', () => {
  it('integers and numeric strings parse; booleans, floats and junk do not', () => {
    expect(parseMessageId(7)).toBe(7);
    expect(parseMessageId('7')).toBe(7);
    expect(parseMessageId(' 7 ')).toBe(7);
    for (const bad of [true, false, 2.9, '5.0', 'x', null, undefined, 0, -2, '0', '-3', {}]) {
      expect(parseMessageId(bad), String(bad)).toBeNull();
    }
  });

  it("the demo's observed sequence, with booleans and floats treated as missing", () => {
    // Demo: [5, 6, 3, 7, 8, 9, 2, 1, 10, 11] (Python int(2.9) = 2, int(True) = 1); here 2.9 and true are missing.
    const raw = [5, undefined, 3, '7', 0, -2, 2.9, true, 'x', null];
    expect(backfillMessageIds(raw)).toEqual([5, 6, 3, 7, 8, 9, 10, 11, 12, 13]);
  });

  it('legacy rows without ids are numbered 1..n; ids may repeat as in the demo', () => {
    expect(backfillMessageIds([undefined, undefined, 3, undefined])).toEqual([1, 2, 3, 4]);
    expect(backfillMessageIds([undefined, 1])).toEqual([1, 1]);
  });
});

describe('keyword search rule (reference §3.3)', () => {
  const rows = ['Apple pie', 'apple', 'APPLE tart', 'banana', 'pineapple'].map((content, i) => ({ content, message_id: i + 1 }));
  const newestFirst = () => [...rows].reverse();

  it('case-insensitive substring, most recent N in ascending order', () => {
    const hits = collectNewestMatches(newestFirst(), (r) => r.content, '  ApPlE ', 2);
    expect(hits.map((r) => r.message_id)).toEqual([3, 5]);
  });

  it('an empty keyword returns the last N rows', () => {
    expect(collectNewestMatches(newestFirst(), (r) => r.content, '   ', 2).map((r) => r.message_id)).toEqual([4, 5]);
  });

  it('CJK keywords match by substring', () => {
    const cjk = [{ content: '我的生日是五月' }, { content: '今天下雨' }];
    expect(collectNewestMatches([...cjk].reverse(), (r) => r.content, '生日', 20)).toEqual([cjk[0]]);
  });

  it('limit is clamped to 1..200', () => {
    expect(clampLimit(0)).toBe(1);
    expect(clampLimit(-5)).toBe(1);
    expect(clampLimit(500)).toBe(200);
    expect(clampLimit(20)).toBe(20);
  });
});

describe('windows (reference §3.4)', () => {
  const rows = [1, 2, 3, 4, 5].map((message_id) => ({ message_id }));
  const ids = (spec: ReturnType<typeof windowSpec>) => (spec ? sliceWindow(rows, spec).map((r) => r.message_id) : []);

  it('edges clip silently', () => {
    expect(ids(windowSpec(1, 5, 1))).toEqual([1, 2]);
    expect(ids(windowSpec(5, 1, 9))).toEqual([4, 5]);
  });

  it('negative before/after count as 0', () => {
    expect(ids(windowSpec(3, -4, -1))).toEqual([3]);
  });

  it('an unknown or invalid anchor gives nothing; a numeric string works', () => {
    expect(ids(windowSpec(9, 1, 1))).toEqual([]);
    expect(ids(windowSpec(0, 1, 1))).toEqual([]);
    expect(ids(windowSpec('x', 1, 1))).toEqual([]);
    expect(ids(windowSpec('3', 1, 0))).toEqual([2, 3]);
  });
});

describe("Python's json.dumps", () => {
  it('default separators, no ASCII escaping', () => {
    expect(pythonJsonDumps({ keyword: '生日' })).toBe('{"keyword": "生日"}');
    expect(pythonJsonDumps({ a: [1, 2], b: { c: null, d: true }, e: 'q"\n' })).toBe(
      '{"a": [1, 2], "b": {"c": null, "d": true}, "e": "q\\"\\n"}',
    );
  });

  it('indent=2 as conversations.json is written', () => {
    expect(pythonJsonDumps({ s1: { title: 't', updated_at: 'u' }, s2: {} }, 2)).toBe(
      '{\n  "s1": {\n    "title": "t",\n    "updated_at": "u"\n  },\n  "s2": {}\n}',
    );
  });
});

describe('tool-call projection', () => {
  it('results pair with their calls by tool_call_id, even for two parallel calls to one tool', () => {
    const views = projectToolCalls([
      { role: 'assistant', content: null, tool_calls: [toolCall('a', 'search_session', { keyword: '生日' }), toolCall('b', 'search_session', { keyword: 'x' })] },
      { role: 'tool', tool_call_id: 'b', content: 'result b' },
      { role: 'tool', tool_call_id: 'a', content: 'result a' },
    ]);
    expect(views).toEqual([
      { name: 'search_session', input: '{"keyword": "生日"}', output: 'result a' },
      { name: 'search_session', input: '{"keyword": "x"}', output: 'result b' },
    ]);
  });

  it('a call without a result keeps output empty; a result without a call is appended', () => {
    const views = projectToolCalls([
      { role: 'assistant', content: null, tool_calls: [toolCall('a', 'get_recent_session', {})] },
      { role: 'tool', tool_call_id: 'zzz', name: 'stray', content: 'orphan' },
    ]);
    expect(views).toEqual([
      { name: 'get_recent_session', input: '{}', output: '' },
      { name: 'stray', input: '', output: 'orphan' },
    ]);
  });

  it('string arguments pass through; unparsable arguments are kept as text', () => {
    const views = projectToolCalls([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: '1', type: 'function', function: { name: 't', arguments: '"plain"' } },
          { id: '2', type: 'function', function: { name: 't', arguments: '{oops' } },
        ],
      },
    ]);
    expect(views.map((v) => v.input)).toEqual(['plain', '{oops']);
  });
});

describe('row format and context', () => {
  const row = { ts: '2026-04-08T10:00:00', role: 'user', content: '你好', messageId: 3, toolCalls: [] };

  it('rows print as "#id ts | role: content" joined by newlines', () => {
    expect(formatRows([row, { ...row, messageId: 4, role: 'assistant', content: 'hi' }])).toBe(
      '#3 2026-04-08T10:00:00 | user: 你好\n#4 2026-04-08T10:00:00 | assistant: hi',
    );
  });

  it('a cross-day daily hit names its day', () => {
    expect(formatDailyRow({ ...row, day: '2026-04-08', sessionId: 's' })).toBe('#3 [2026-04-08] 2026-04-08T10:00:00 | user: 你好');
  });

  it('context sections appear only when non-empty, in order', () => {
    expect(buildPromptContext({ session: [], daily: [], longTerm: '' })).toBe('');
    expect(buildPromptContext({ session: [{ role: 'user', content: 'a\nb' }], daily: [], longTerm: 'likes tea' })).toBe(
      '[SESSION]\nuser: a\nb\n[LONG_TERM]\nlikes tea',
    );
    expect(buildPromptContext({ session: [], daily: [{ role: 'assistant', content: 'x' }], longTerm: '' })).toBe('[DAILY]\nassistant: x');
  });

  it('the system prompt holds every phrase the demo pins, then the context', () => {
    const prompt = buildSystemPrompt('[LONG_TERM]\nctx');
    for (const phrase of ['完整', '不是增量', 'remember_note', '旧信息', '搜索', 'message_id', 'get_session_window', 'get_daily_window', '优先调用工具', '能调用工具就调用工具', '只有在工具确实无法解决问题时']) {
      expect(prompt).toContain(phrase);
    }
    expect(prompt.endsWith('\n\n可用记忆上下文:\n[LONG_TERM]\nctx')).toBe(true);
  });

  it('the system prompt never flips the offline fallback', async () => {
    const reply = await fallbackLlm().chat([
      { role: 'system', content: buildSystemPrompt('') },
      { role: 'user', content: 'hi' },
    ]);
    expect(reply.content).toBe('收到：hi。我已经记录到记忆中。');
  });
});

describe('titles', () => {
  it('offline: the first 12 code points of the trimmed message, 新对话 when blank', () => {
    expect(offlineTitle('  请帮我规划一下明天去北京的行程安排  ')).toBe('请帮我规划一下明天去北京');
    expect(offlineTitle('   ')).toBe('新对话');
    expect(offlineTitle('😀'.repeat(20))).toBe('😀'.repeat(12));
  });

  it('with a model: its answer, trimmed, without line breaks, cut to 12', async () => {
    const llm = scriptedLlm([says('  北京行程\n规划助手和一些别的很长的字 ')]);
    expect(await generateTitle(llm, 'msg', 'reply')).toBe('北京行程规划助手和一些别');
    expect(String(llm.calls[0]!.messages[0]!.content)).toContain('用户: msg\n助手: reply');
  });

  it("asks the model at temperature 0, the demo's title temperature", async () => {
    const llm = scriptedLlm([says('标题')]);
    await generateTitle(llm, 'msg', 'reply');
    expect(llm.calls[0]!.options?.temperature).toBe(0);
  });

  it('with a model that fails or answers nothing: the offline title', async () => {
    expect(await generateTitle(scriptedLlm([new Error('down')]), 'hello world', 'r')).toBe('hello world');
    expect(await generateTitle(scriptedLlm([says('  ')]), 'hello', 'r')).toBe('hello');
  });
});
