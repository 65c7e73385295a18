import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import type { Message } from '../../src/message.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { says, scriptedLlm } from '../support/scripted-llm.ts';

// recall.recordTurn: a turn whose reply came from another framework, stored where chat stores its own.
const transcript: Message[] = [
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'rain, 7°C' },
];

describe('recall.recordTurn', () => {
  let fx: RecallFixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  it('stores the message and the reply with its tool calls in the session, the daily view, the index and the log', async () => {
    fx = openRecall();
    const { recall } = fx;
    const result = await recall.recordTurn({ userId: 'u1', sessionId: 's1', message: 'weather in Oslo?', reply: 'Rainy, 7°C.', toolTranscript: transcript, memoryContext: '[SESSION]' });
    expect(result).toEqual({ title: 'weather in O', toolCalls: [{ name: 'weather', input: '{"city": "Oslo"}', output: 'rain, 7°C' }], messageIds: { user: 1, reply: 2 } });

    const rows = await recall.sessionMessages('u1', 's1');
    expect(rows.map((r) => [r.role, r.content, r.messageId])).toEqual([['user', 'weather in Oslo?', 1], ['assistant', 'Rainy, 7°C.', 2]]);
    expect(rows[1]!.toolCalls).toEqual(result.toolCalls);
    expect((await recall.dailyMessages('u1')).map((r) => [r.role, r.content, r.sessionId])).toEqual([['user', 'weather in Oslo?', 's1'], ['assistant', 'Rainy, 7°C.', 's1']]);
    expect((await recall.listSessions('u1')).map((s) => [s.sessionId, s.title])).toEqual([['s1', 'weather in O']]);
    const { items: hits } = await recall.search({ userId: 'u1', query: 'Oslo' });
    expect(hits.map((h) => [h.source, h.sessionId, h.messageId])).toContainEqual(['session', 's1', 1]);
    const [log] = await recall.dialogueLog('u1', 's1');
    expect(log).toMatchObject({ userMessage: 'weather in Oslo?', assistantReply: 'Rainy, 7°C.', memoryContext: '[SESSION]', toolCalls: result.toolCalls });

    // A chat turn after it sees it as the session's window, and keeps the title.
    const next = await recall.chat({ userId: 'u1', sessionId: 's1', message: 'and tomorrow?' });
    expect(next.title).toBe('weather in O');
    expect((await recall.dialogueLog('u1', 's1'))[1]!.memoryContext).toContain('assistant: Rainy, 7°C.');
  });

  it('queues the turn for fact extraction with a facts model', async () => {
    const facts = scriptedLlm([says('{"facts": [{"text": "lives in Oslo", "key": "home"}]}')]);
    fx = openRecall({ factsLlm: facts });
    await fx.recall.recordTurn({ userId: 'u1', sessionId: 's1', message: 'I live in Oslo', reply: 'Noted.' });
    await fx.recall.extractionIdle();
    expect(JSON.parse(facts.calls[0]!.messages[1]!.content as string)).toEqual({ user: 'I live in Oslo', assistant: 'Noted.' });
    expect((await fx.recall.listFacts('u1')).map((f) => [f.text, f.source.messageIds])).toEqual([['lives in Oslo', [1, 2]]]);
  });

  it.each([
    [{ userId: 'u1', sessionId: ' s1', message: 'm', reply: 'r' }, 'invalid_id'],
    [{ userId: 'u1', sessionId: 's1', message: 7, reply: 'r' }, 'invalid_message'],
    [{ userId: 'u1', sessionId: 's1', message: 'm', reply: null }, 'invalid_message'],
    [{ userId: 'u1', sessionId: 's1', message: 'm', reply: 'r', toolTranscript: [{ role: 'user', content: 'x' }] }, 'invalid_message'],
    [{ userId: 'u1', sessionId: 's1', message: 'm', reply: 'r', toolTranscript: [{ role: 'tool', content: 'x' }] }, 'invalid_message'],
  ])('refuses %j with %s and stores nothing', async (input, code) => {
    fx = openRecall();
    const error = await fx.recall.recordTurn(input as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe(code);
    expect(await fx.recall.listSessions('u1')).toEqual([]);
    expect(await fx.recall.sessionMessages('u1', 's1')).toEqual([]);
  });
});
