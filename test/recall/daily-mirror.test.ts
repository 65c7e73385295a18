import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue, Message } from '../../src/message.ts';
import { startMirror } from '../../src/recall/storage/lmdb/daily-mirror.ts';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { registerSession } from '../../src/recall/storage/lmdb/sessions-index.ts';
import { itLmdb, openRecall, type RecallFixture } from '../support/recall-fixture.ts';

/**
 * A turn writes its session row and its daily row in two transactions. A process that dies
 * between them leaves the row in the session only; the next turn on that session puts it in
 * the daily view, as its own turn would have. Here the "crash" is a session row appended the
 * way a turn appends it, with no daily row after it.
 */
let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';
const S = 's';
const conversation = sessionConversationId(U, S);
const day = '2026-04-08'; // the fixture's clock: 2026-04-08T10:00:00+08:00 in Asia/Shanghai
const dailyView = async () => (await fx!.recall.dailyMessages(U, day)).map((r) => [r.role, r.content, r.messageId, r.sessionId]);

describe('the daily view after a crash between a session row and its daily row', () => {
  // Crash repair is LMDB's (a turn there is two transactions); on PostgreSQL a turn's rows and
  // their mirror are one transaction, so no crash leaves an orphan.
  itLmdb('the next turn mirrors the orphan user row, once, before its own rows', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: S, message: 'first' });
    await fx.memory.append(conversation, [{ message: { role: 'user', content: 'lost in a crash' }, meta: { ts: '2026-04-08T10:00:00' } }]);
    expect((await dailyView()).map((r) => r[1])).toEqual(['first', '收到：first。我已经记录到记忆中。']);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'second' });
    expect(await dailyView()).toEqual([
      ['user', 'first', 1, S],
      ['assistant', '收到：first。我已经记录到记忆中。', 2, S],
      ['user', 'lost in a crash', 3, S],
      ['user', 'second', 4, S],
      ['assistant', '收到：second。我已经记录到记忆中。', 5, S],
    ]);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'third' });
    expect((await dailyView()).filter((r) => r[1] === 'lost in a crash')).toHaveLength(1);
  });

  itLmdb('an orphan reply keeps its tool calls and its error, on the day of its own ts', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: S, message: 'first' });
    const transcript: Message[] = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'remember_note', arguments: '{"note":"tea"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    await fx.memory.append(conversation, [
      { message: { role: 'assistant', content: '' }, meta: { ts: '2026-04-07T23:59:59', transcript: transcript as unknown as JsonValue, error: { code: 'llm_timeout', message: 'slow' } } },
    ]);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'again' });
    const [orphan] = await fx.recall.dailyMessages(U, '2026-04-07');
    expect(orphan).toMatchObject({
      role: 'assistant',
      content: '',
      ts: '2026-04-07T23:59:59',
      day: '2026-04-07',
      sessionId: S,
      toolCalls: [{ name: 'remember_note', output: 'ok' }],
      error: { code: 'llm_timeout', message: 'slow' },
    });
    // Exactly what the session row projects (the same view a turn writes).
    const [sessionRow] = (await fx.recall.getSessionMessages(U, S)).filter((r) => r.messageId === 3);
    expect(orphan!.toolCalls).toEqual(sessionRow!.toolCalls);
  });

  // LMDB's: the state its first turn leaves when it dies, written into its databases.
  itLmdb('the first turn of a new session, cut short after its user row, is mirrored by the next', async () => {
    fx = openRecall();
    // What a first turn has done when it dies: registered the session, stored its user row.
    const dbs = openRecallDbs(fx.env);
    await commit(dbs, () => {
      registerSession(dbs, U, S, '2026-04-08T10:00:00');
      startMirror(dbs, U, S);
    });
    await fx.memory.append(conversation, [{ message: { role: 'user', content: 'cut short' }, meta: { ts: '2026-04-08T10:00:00' } }]);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'next' });
    expect((await dailyView()).map((r) => r[1])).toEqual(['cut short', 'next', '收到：next。我已经记录到记忆中。']);
  });

  it('a session cleared behind its back starts over, and a deleted one leaves no mark', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: S, message: 'one' });
    await fx.memory.clear(conversation);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'two' });
    expect((await dailyView()).map((r) => r[1])).toEqual(['one', '收到：one。我已经记录到记忆中。', 'two', '收到：two。我已经记录到记忆中。']);
    await fx.recall.deleteSession(U, S);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'three' });
    expect((await dailyView()).map((r) => r[1])).toEqual(['three', '收到：three。我已经记录到记忆中。']);
  });
});
