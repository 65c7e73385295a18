import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/message.ts';
import { TIMELINE_CHUNK_ROWS, toolCallTimeline, type TimelineReader, type ToolCallTimelineItem } from '../../src/server/tool-call-timeline.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { says, scriptedLlm, toolCalls } from '../support/scripted-llm.ts';

// The tool-call timeline as a bounded scan over a real recall service (LMDB): the same calls in
// the same order as reading everything, page after page, and each request reads a bounded number
// of rows (counted on the real service's answers) however long the history.

let fx: RecallFixture;
/** Rows the timeline read through the service. */
let rowsRead = 0;
let reader: TimelineReader;

// A user message containing TOOL gets one search_session call; any other, a plain reply.
const llm = scriptedLlm((messages: readonly Message[]) => {
  const last = messages[messages.length - 1]!;
  if (last.role === 'user' && typeof last.content === 'string' && last.content.includes('TOOL')) return toolCalls(['c', 'search_session', { keyword: last.content }]);
  return says('ok');
});

beforeAll(async () => {
  fx = openRecall({ llm });
  const chat = async (sessionId: string, message: string) => {
    fx.clock.advance(1_000);
    await fx.recall.chat({ userId: 'u', sessionId, message });
  };
  // Interleaved in time across sessions, so the order is a merge, not session by session.
  await chat('a', 'TOOL a1');
  await chat('b', 'TOOL b1');
  await chat('a', 'TOOL a2');
  await chat('c', 'plain');
  await chat('b', 'TOOL b2');
  // A long stretch with no tool calls: the newest rows of the user.
  for (let i = 0; i < 150; i++) await chat('long', `plain ${i}`);
  await chat('c', 'TOOL c1'); // newest of all
  reader = {
    listSessions: (u) => fx.recall.listSessions(u),
    sessionMessagesPage: async (u, s, q) => {
      const page = await fx.recall.sessionMessagesPage(u, s, q);
      rowsRead += page.rows.length;
      return page;
    },
  };
}, 120_000);
afterAll(async () => {
  await fx.close();
});

const query = { userId: 'u', tool: '', keyword: '', limit: 500, cursor: '' };
const names = (items: ToolCallTimelineItem[]) => items.map((i) => i.user_message);

describe('tool-call timeline', () => {
  it('lists every call newest turn first, merged across sessions', async () => {
    const all = await toolCallTimeline(reader, query);
    expect(names(all.items)).toEqual(['TOOL c1', 'TOOL b2', 'TOOL a2', 'TOOL b1', 'TOOL a1']);
    expect(all.nextCursor).toBeNull();
  });

  it('pages with a cursor through the same calls, in the same order', async () => {
    const seen: ToolCallTimelineItem[] = [];
    let cursor = '';
    for (let pages = 0; pages < 20; pages++) {
      const page = await toolCallTimeline(reader, { ...query, limit: 2, cursor });
      seen.push(...page.items);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual((await toolCallTimeline(reader, query)).items);
  });

  it('reads only the newest chunk of each session it needs for the newest call', async () => {
    rowsRead = 0;
    const page = await toolCallTimeline(reader, { ...query, limit: 1 });
    expect(names(page.items)).toEqual(['TOOL c1']);
    // c's last chunk (4 rows, and its newest row once more), not the 300 rows of `long`.
    expect(rowsRead).toBeLessThan(TIMELINE_CHUNK_ROWS);
  });

  it('stops at its row budget with a cursor, and the cursors reach every call', async () => {
    const budget = 50;
    const seen: ToolCallTimelineItem[] = [];
    let cursor = '';
    let pages = 0;
    for (; pages < 50; pages++) {
      rowsRead = 0;
      const page = await toolCallTimeline(reader, { ...query, cursor }, budget);
      // The budget, the chunk that crossed it, and the binary searches' single rows.
      expect(rowsRead).toBeLessThanOrEqual(budget + TIMELINE_CHUNK_ROWS + 1 + 4 * 12);
      seen.push(...page.items);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(pages).toBeGreaterThan(1);
    expect(names(seen)).toEqual(['TOOL c1', 'TOOL b2', 'TOOL a2', 'TOOL b1', 'TOOL a1']);
  });

  it('filters by tool and keyword', async () => {
    expect(names((await toolCallTimeline(reader, { ...query, keyword: 'b1' })).items)).toEqual(['TOOL b1']);
    expect((await toolCallTimeline(reader, { ...query, tool: 'remember_note' })).items).toEqual([]);
  });
});
