import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RECALL_LIMITS, RecallLimitError } from '../../src/recall/index.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

// Recall's per-user limits (recall-limits.ts) on a real LMDB environment: refused with a typed
// error before anything is written, and what was there stays usable.

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const limitError = (code: string, limit: number) => expect.objectContaining({ constructor: RecallLimitError, code, limit });

describe('recall limits', () => {
  it('has defaults past normal use', () => {
    expect(DEFAULT_RECALL_LIMITS).toEqual({ sessionsPerUser: 10_000, forksPerSession: 1_000, searchTerms: 128 });
  });

  it('refuses a new session past sessionsPerUser, storing nothing; existing sessions and other users go on', async () => {
    fx = openRecall({ limits: { sessionsPerUser: 2 } });
    const r = fx.recall;
    await r.chat({ userId: 'u', sessionId: 'a', message: 'one' });
    await r.chat({ userId: 'u', sessionId: 'b', message: 'two' });
    await expect(r.chat({ userId: 'u', sessionId: 'c', message: 'three' })).rejects.toEqual(limitError('session_limit', 2));
    expect(await r.getSessionMessages('u', 'c')).toEqual([]);
    expect((await r.listSessions('u')).map((s) => s.sessionId).sort()).toEqual(['a', 'b']);
    await r.chat({ userId: 'u', sessionId: 'a', message: 'again' }); // an existing session
    await r.chat({ userId: 'v', sessionId: 'c', message: 'another user' });
    // A fork is a new session too.
    await expect(r.forkSession('u', 'a', 1)).rejects.toEqual(limitError('session_limit', 2));
    // Deleting one makes room.
    await r.deleteSession('u', 'b');
    await r.chat({ userId: 'u', sessionId: 'c', message: 'three' });
  });

  it('refuses a fork past forksPerSession; a fork of the fork is counted on the fork', async () => {
    fx = openRecall({ limits: { forksPerSession: 2 } });
    const r = fx.recall;
    await r.chat({ userId: 'u', sessionId: 'src', message: 'root' });
    const first = await r.forkSession('u', 'src', 1);
    await r.forkSession('u', 'src', 1);
    await expect(r.forkSession('u', 'src', 1, 'third')).rejects.toEqual(limitError('fork_limit', 2));
    expect((await r.listSessions('u')).map((s) => s.sessionId)).not.toContain('third');
    await r.forkSession('u', first, 1);
    await r.deleteSession('u', first);
    await r.forkSession('u', 'src', 1, 'third');
  });

  it('refuses a search query of more distinct terms than searchTerms', async () => {
    fx = openRecall({ limits: { searchTerms: 3 } });
    const r = fx.recall;
    await r.chat({ userId: 'u', sessionId: 's', message: 'ferry to Hydra in June' });
    expect(((await r.search({ userId: 'u', query: 'ferry ferry Hydra June' })).items).length).toBeGreaterThan(0);
    await expect(r.search({ userId: 'u', query: 'ferry Hydra June island' })).rejects.toEqual(limitError('search_terms_limit', 3));
  });

  it('refuses a limit that is not an integer >= 1 with invalid_option', () => {
    expect(() => openRecall({ limits: { searchTerms: 0 } })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});
