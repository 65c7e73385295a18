import { afterEach, describe, expect, it } from 'vitest';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';

describe('long-term memory: one document per user', () => {
  it('a write replaces the whole document, stored trimmed', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, '  likes tea\nlives in Beijing  \n');
    expect(await fx.recall.getLongTerm(U)).toBe('likes tea\nlives in Beijing');
    await fx.recall.setLongTerm(U, 'likes coffee');
    expect(await fx.recall.getLongTerm(U)).toBe('likes coffee');
  });

  it('an unknown user has an empty document', async () => {
    fx = openRecall();
    expect(await fx.recall.getLongTerm(U)).toBe('');
    expect(await fx.recall.longTermHistory(U)).toEqual([]);
  });

  it('a blank note is a no-op, and so is the same document again', async () => {
    fx = openRecall();
    expect(await fx.recall.setLongTerm(U, '   \n ')).toBeNull();
    expect(await fx.recall.longTermHistory(U)).toEqual([]);
    await fx.recall.setLongTerm(U, 'likes tea');
    expect(await fx.recall.setLongTerm(U, '  ')).toBeNull();
    expect(await fx.recall.setLongTerm(U, 'likes tea ')).toBeNull();
    expect(await fx.recall.getLongTerm(U)).toBe('likes tea');
    expect(await fx.recall.longTermHistory(U)).toHaveLength(1);
  });

  it('earlier versions are kept, with when and how they were written', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'v1');
    fx.clock.advance(1000);
    await fx.recall.setLongTerm(U, 'v2');
    expect(await fx.recall.longTermHistory(U)).toEqual([
      { version: 1, content: 'v1', ts: '2026-04-08T10:00:00', source: 'set' },
      { version: 2, content: 'v2', ts: '2026-04-08T10:00:01', source: 'set' },
    ]);
  });

  it('undo restores the previous version, step by step, down to nothing', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'v1');
    await fx.recall.setLongTerm(U, 'v2 (the model dropped a fact)');
    expect(await fx.recall.undoLongTerm(U)).toBe('v1');
    expect(await fx.recall.getLongTerm(U)).toBe('v1');
    expect(await fx.recall.undoLongTerm(U)).toBe('');
    expect(await fx.recall.getLongTerm(U)).toBe('');
    expect(await fx.recall.undoLongTerm(U)).toBeNull();
  });

  it('remember_note is a full overwrite; a blank note changes nothing but still answers "stored"', async () => {
    fx = openRecall();
    const tool = fx.recall.memoryTools(U, 's').find((t) => t.name === 'remember_note')!;
    expect(await tool.execute({ note: 'likes tea', tags: 'preference' }, {} as never)).toBe('stored');
    expect(await tool.execute({ note: 'likes tea\nborn in May' }, {} as never)).toBe('stored');
    expect(await tool.execute({ note: '   ' }, {} as never)).toBe('stored');
    expect(await fx.recall.getLongTerm(U)).toBe('likes tea\nborn in May');
    expect((await fx.recall.longTermHistory(U)).map((v) => v.source)).toEqual(['remember_note', 'remember_note']);
  });

  it('a document that is not a string is refused with invalid_message', async () => {
    fx = openRecall();
    await expect(fx.recall.setLongTerm(U, 42 as unknown as string)).rejects.toMatchObject({ code: 'invalid_message' });
  });
});
