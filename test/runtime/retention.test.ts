import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { summaryConversationId } from '../../src/provider/summary-record.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.ts';
import { manualClock, ZONE } from '../support/recall-fixture.ts';

let runtime: Runtime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const HOUR = 3_600_000;
let n = 0;

async function start(options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-retention-'));
  runtime = await startRuntime({ name: `retention_${++n}`, dataDir: dir, lmdb: { noSync: true }, recall: false, ...options });
  return runtime;
}

const msg = (content: string) => [{ role: 'user' as const, content }];

describe('retention: the TTL sweep of idle conversations', () => {
  it('clears an idle conversation with its summaries and keeps an active one', async () => {
    const clock = manualClock();
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR } });
    await rt.memory.add('old', msg('written long ago'));
    await rt.memory.add(summaryConversationId('old'), [{ role: 'assistant', content: 'a summary of old' }]);
    clock.advance(2 * HOUR);
    await rt.memory.add('fresh', msg('written just now'));
    const report = await rt.retention.sweep();
    expect(report.cleared).toEqual(['old']);
    expect(await rt.memory.get('old')).toEqual([]);
    expect(await rt.memory.lastId(summaryConversationId('old'))).toBe(0);
    expect(await rt.memory.get('fresh')).toEqual(msg('written just now'));
    // Cleared, it numbers from 1 again.
    const [first] = await rt.memory.append('old', [{ message: msg('back')[0]! }]);
    expect(first!.message_id).toBe(1);
  });

  it('keeps a conversation whose last write is younger than its TTL, whatever its first write', async () => {
    const clock = manualClock();
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR } });
    await rt.memory.add('c', msg('first'));
    clock.advance(2 * HOUR);
    await rt.memory.add('c', msg('again'));
    clock.advance(HOUR / 2);
    expect((await rt.retention.sweep()).cleared).toEqual([]);
    expect(await rt.memory.lastId('c')).toBe(2);
  });

  it('takes a conversation’s own TTL over the runtime’s: longer, shorter, never; undefined goes back to the default', async () => {
    const clock = manualClock();
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR } });
    for (const c of ['default', 'longer', 'shorter', 'never', 'reset']) await rt.memory.add(c, msg(c));
    await rt.retention.setTtl('longer', 10 * HOUR);
    await rt.retention.setTtl('shorter', 60_000);
    await rt.retention.setTtl('never', null);
    await rt.retention.setTtl('reset', 10 * HOUR);
    await rt.retention.setTtl('reset', undefined);
    expect(await rt.retention.getTtl('longer')).toBe(10 * HOUR);
    expect(await rt.retention.getTtl('never')).toBeNull();
    expect(await rt.retention.getTtl('reset')).toBeUndefined();

    clock.advance(2 * 60_000);
    expect((await rt.retention.sweep()).cleared).toEqual(['shorter']);
    clock.advance(2 * HOUR);
    expect((await rt.retention.sweep()).cleared.sort()).toEqual(['default', 'reset']);
    clock.advance(100 * HOUR);
    expect((await rt.retention.sweep()).cleared).toEqual(['longer']);
    expect(await rt.memory.get('never')).toEqual(msg('never'));
    // A cleared conversation's own TTL goes with it.
    expect(await rt.retention.getTtl('longer')).toBeUndefined();
  });

  it('examines at most perTick conversations per tick, resuming where the last tick stopped', async () => {
    const clock = manualClock();
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, perTick: 3, sweepEveryMs: 24 * HOUR } });
    const ids = Array.from({ length: 10 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    for (const c of ids) await rt.memory.add(c, msg(c));
    clock.advance(2 * HOUR);
    const ticks = [];
    for (let i = 0; i < 4; i++) ticks.push(await rt.retention.sweep());
    expect(ticks.map((t) => t.examined)).toEqual([3, 3, 3, 1]);
    expect(ticks.map((t) => t.cleared.length)).toEqual([3, 3, 3, 1]);
    expect(ticks.map((t) => t.wrapped)).toEqual([false, false, false, true]);
    expect(ticks.flatMap((t) => t.cleared)).toEqual(ids);
  });

  it('deletes an idle recall session as deleteSession does (transcript, daily rows, log, index: gone from search) and keeps an active one', async () => {
    const clock = manualClock();
    const rt = await start({
      wallClock: clock,
      recall: { clock, timeZone: ZONE, pool: false },
      retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR },
    });
    await rt.recall.chat({ userId: 'u', sessionId: 'idle', message: 'OLD_TOPIC oolong' });
    await rt.memory.add('plain', msg('a plain conversation'));
    clock.advance(2 * HOUR);
    await rt.recall.chat({ userId: 'u', sessionId: 'active', message: 'NEW_TOPIC sencha' });
    await rt.retention.setTtl(sessionConversationId('u', 'pinned'), null);
    const report = await rt.retention.sweep();
    expect(report.deletedSessions).toEqual([['u', 'idle']]);
    expect(report.cleared).toEqual(['plain']);
    expect((await rt.recall.listSessions('u')).map((s) => s.sessionId)).toEqual(['active']);
    expect(await rt.recall.getSessionMessages('u', 'idle')).toEqual([]);
    expect(await rt.recall.searchDaily({ userId: 'u', keyword: 'OLD_TOPIC', limit: 200 })).toEqual([]);
    expect(await rt.recall.dialogueLog('u', 'idle')).toEqual([]);
    expect((await rt.recall.searchDaily({ userId: 'u', keyword: 'NEW_TOPIC' })).length).toBeGreaterThan(0);
  });

  it('keeps a conversation written to between the sweep reading it and clearing it: the check and the clear are one step', async () => {
    const clock = manualClock();
    const landed: Array<Promise<unknown>> = [];
    let armed = false;
    // The sweep asks its clock for "now" right after reading a conversation's last record: a
    // write issued there lands after the read and before the clear (the old code's window).
    const sweepClock = {
      now: () => {
        if (armed) landed.push(runtime!.memory.add('victim', msg(`landed ${landed.length}`)));
        return clock.now();
      },
    };
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR, clock: sweepClock } });
    await rt.memory.add('victim', msg('written long ago'));
    clock.advance(2 * HOUR);
    armed = true;
    const report = await rt.retention.sweep();
    armed = false;
    await Promise.all(landed);
    expect(landed.length).toBeGreaterThan(0);
    expect(report.cleared).toEqual([]);
    expect(await rt.memory.get('victim')).toEqual([...msg('written long ago'), ...landed.map((_, i) => msg(`landed ${i}`)[0]!)]);
    // Idle again: the next sweep clears it.
    clock.advance(2 * HOUR);
    expect((await rt.retention.sweep()).cleared).toEqual(['victim']);
  });

  it('keeps a recall session whose transcript is written to between the sweep reading it and deleting it', async () => {
    const clock = manualClock();
    const transcript = sessionConversationId('u', 'busy');
    let landed: Promise<unknown> | undefined;
    let armed = false;
    const sweepClock = {
      now: () => {
        // A turn's user row, arriving just after the sweep read the session's last row.
        if (armed) landed ??= runtime!.memory.add(transcript, msg('LATE_TOPIC hojicha'));
        return clock.now();
      },
    };
    const rt = await start({
      wallClock: clock,
      recall: { clock, timeZone: ZONE, pool: false },
      retention: { idleTtlMs: HOUR, sweepEveryMs: 24 * HOUR, clock: sweepClock },
    });
    await rt.recall.chat({ userId: 'u', sessionId: 'busy', message: 'OLD_TOPIC oolong' });
    clock.advance(2 * HOUR);
    armed = true;
    const report = await rt.retention.sweep();
    armed = false;
    await landed;
    expect(report.deletedSessions).toEqual([]);
    expect((await rt.memory.get(transcript)).map((m) => m.content)).toEqual(['OLD_TOPIC oolong', expect.any(String), 'LATE_TOPIC hojicha']);
    expect((await rt.recall.listSessions('u')).map((s) => s.sessionId)).toEqual(['busy']);
    expect((await rt.recall.searchDaily({ userId: 'u', keyword: 'OLD_TOPIC' })).length).toBeGreaterThan(0);
  });

  it('sweeps by itself on its timer (the supervised sweeper process)', async () => {
    const clock = manualClock();
    const rt = await start({ wallClock: clock, retention: { idleTtlMs: HOUR, sweepEveryMs: 5 } });
    await rt.memory.add('old', msg('old'));
    clock.advance(2 * HOUR);
    await vi.waitFor(async () => expect(await rt.memory.lastId('old')).toBe(0), { timeout: 10_000, interval: 10 });
  });

  it('refuses bad retention options and TTLs with invalid_option, storing nothing', async () => {
    await expect(start({ retention: { idleTtlMs: 0 } })).rejects.toMatchObject({ code: 'invalid_option' });
    rmSync(dir!, { recursive: true, force: true });
    runtime = undefined;
    await expect(start({ retention: { idleTtlMs: HOUR, perTick: 1.5 } })).rejects.toMatchObject({ code: 'invalid_option' });
    rmSync(dir!, { recursive: true, force: true });
    runtime = undefined;
    await expect(start({ storage: 'memory', retention: { idleTtlMs: HOUR } })).rejects.toMatchObject({ code: 'invalid_option' });
    runtime = undefined;
    const rt = await start();
    await expect(rt.retention.setTtl('c', -5)).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(rt.retention.setTtl('c', 1.5)).rejects.toMatchObject({ code: 'invalid_option' });
    expect(await rt.retention.getTtl('c')).toBeUndefined();
    await expect(rt.retention.sweep()).rejects.toMatchObject({ code: 'invalid_option' });
  });
});
