import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/message.ts';
import { MESSAGES_DB } from '../../src/memory/lmdb/lmdb-table.ts';
import { rawPrefilter, runThrough, scanSession, type RawSessionRecord } from '../../src/recall/storage/lmdb/search/search-scan.ts';
import { openRawText } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { textContent } from '../../src/recall/rows/session-row.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

/**
 * The scan skips rows on their raw JSON text before decoding them. It must never skip a row the
 * plain rule (lowercased content includes the lowercased keyword) would return: every keyword
 * below is scanned both ways over rows made to trip a byte-level test.
 */
const MESSAGES: Message[] = [
  { role: 'user', content: 'The Project DeadLine moved' },
  { role: 'user', content: 'she said "hi"\nthen left\\out' },
  { role: 'user', content: [{ type: 'text', text: 'foo' }, { type: 'text', text: 'bar' }] },
  { role: 'user', content: '\u212Aelvin is a unit' }, // KELVIN SIGN lowercases to ASCII k
  { role: 'user', content: 'ÉTÉ en France' },
  { role: 'user', content: 'a.b*c and (x|y) [z]' },
  { role: 'user', content: 'axb' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'deadline_tool', arguments: '{}' } }] },
  { role: 'user', content: 'tab\there, bell\u0007' },
  { role: 'user', content: 'İstanbul' },
];
const KEYWORDS = ['deadline', 'DEADLINE', 'project dead', 'hi"', '"hi"', 'nthen', 'then', 'left\\out', 'obar', 'foo', 'kelvin', 'été', 'ete', 'a.b', '.b*', '(x|y)', '[z]', 'deadline_tool', 'ttab', 'there', 'i̇stanbul', 'istanbul', 'content', 'role', 'zzz'];

let fx: RecallFixture;
let source: { json: ReturnType<typeof openJson>; text: ReturnType<typeof openRawText<[string, number]>> };
const openJson = (f: RecallFixture) => f.env.root.openDB<RawSessionRecord, [string, number]>(MESSAGES_DB, { encoding: 'json' });

beforeAll(async () => {
  fx = openRecall();
  await fx.memory.append('c', MESSAGES.map((message) => ({ message, meta: { note: 'deadline in meta only' } })));
  source = { json: openJson(fx), text: openRawText(fx.env.root, MESSAGES_DB) };
});
afterAll(() => fx.close());

describe('the raw-text prefilter', () => {
  it('finds exactly what decoding every row finds, for every keyword', () => {
    for (const keyword of KEYWORDS) {
      const expected = MESSAGES.map((m, i) => ({ id: i + 1, text: textContent(m) }))
        .filter((r) => r.text.toLowerCase().includes(keyword.trim().toLowerCase()))
        .map((r) => r.id);
      const found = runThrough(scanSession(source, 'c', keyword, 200)).map((r) => r.message_id);
      expect(found, keyword).toEqual(expected);
    }
  });

  it('is used only for printable ASCII keywords without quote or backslash', () => {
    expect(rawPrefilter('deadline')).toBeInstanceOf(RegExp);
    expect(rawPrefilter('a.b*')).toBeInstanceOf(RegExp);
    for (const unsafe of ['hi"', 'left\\out', 'été', 'tab\there', null]) expect(rawPrefilter(unsafe)).toBeUndefined();
  });

  it('treats the keyword as text, not as a pattern', () => {
    const re = rawPrefilter('a.b')!;
    expect(re.test('{"content":"axb"}')).toBe(false);
    expect(re.test('{"content":"A.B"}')).toBe(true);
  });
});
