import { afterEach, describe, expect, it } from 'vitest';
import { DEPRECATED_RECALL_METHODS } from '../../src/recall/index.ts';
import type { MemoryRow, SessionRow } from '../../src/index.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

// The names renamed in 0.2 keep working for one minor version (CHANGELOG: the migration
// table). This list is the contract: removing an alias before then fails here.
const expectedAliases = {
  getSessionMessages: 'sessionMessages',
  listMemory: 'listFacts',
  memoryHistory: 'factHistory',
  updateMemory: 'updateFact',
  forgetMemory: 'forgetFact',
  rankMemory: 'rankFacts',
};

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('deprecated names', () => {
  it('are exactly the renamed methods of Recall, each beside its new name', () => {
    expect(DEPRECATED_RECALL_METHODS).toEqual(expectedAliases);
  });

  it('each old method answers what its new name answers', async () => {
    fx = openRecall();
    const r = fx.recall;
    await r.chat({ userId: 'u', sessionId: 's', message: 'hello' });
    const { entry } = await r.remember('u', { text: 'likes green tea', key: 'drink' });
    expect(await r.getSessionMessages('u', 's')).toEqual(await r.sessionMessages('u', 's'));
    expect(await r.listMemory('u')).toEqual(await r.listFacts('u'));
    expect(await r.memoryHistory('u')).toEqual(await r.factHistory('u'));
    expect(await r.rankMemory('u', 'tea')).toEqual(await r.rankFacts('u', 'tea'));
    const changed = await r.updateMemory('u', entry.id, { text: 'likes black tea', version: 1 });
    expect(changed.status).toBe('superseded');
    expect((await r.forgetMemory('u', changed.entry.id)).validTo).toBeDefined();
    expect(await r.listFacts('u')).toEqual([]);
  });

  it('the old row type is the new one', () => {
    const row: SessionRow = { ts: 't', role: 'user', content: 'c', messageId: 1, toolCalls: [] };
    const old: MemoryRow = row;
    expect(old).toBe(row);
  });
});
