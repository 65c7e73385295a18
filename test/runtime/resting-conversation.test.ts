import { afterEach, describe, expect, it } from 'vitest';
import { whereis, type Pid } from '../../src/otp/index.ts';
import { resolve } from '../../src/otp/process.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { createFaultInjector } from '../../src/testing.ts';
import { nameOf, nextEvent, tempDir, user } from '../support/runtime-fixtures.ts';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const actor = (c: string) => `mnemo/conversation/${c}`;
/** Whether the shell holds a full xstate actor for the process right now. */
const awake = (pid: Pid | undefined) => resolve(pid!)?.actor !== undefined;
const conversations = (runtime: Runtime) => runtime.inspect().children.find((c) => c.id === 'conversations')!.children;

describe('a live conversation at rest', () => {
  it('holds no xstate actor between writes, is shown ready, and takes writes without waking', async () => {
    const dir = tempDir();
    const runtime = await startRuntime({ dataDir: dir.path, idleMs: 60_000 });
    cleanup.push(dir.remove, () => runtime.stop());
    await runtime.memory.add('a', [user('1')]);
    const pid = whereis(actor('a'));
    expect(awake(pid)).toBe(false);
    expect(conversations(runtime).map((c) => [c.name, c.state])).toEqual([[actor('a'), 'ready']]);
    const records = await Promise.all([runtime.memory.append('a', [{ message: user('2') }]), runtime.memory.append('a', [{ message: user('3') }])]);
    expect(records.flat().map((r) => r.message_id)).toEqual([2, 3]);
    expect(whereis(actor('a'))).toBe(pid);
    expect(awake(pid)).toBe(false);
  });

  it('wakes when its commit fails, crashes, and its restarted incarnation rests again and numbers on', async () => {
    const faults = createFaultInjector();
    const dir = tempDir();
    const runtime = await startRuntime({ dataDir: dir.path, idleMs: 60_000, faults });
    cleanup.push(dir.remove, () => runtime.stop());
    await runtime.memory.add('c', [user('1')]);
    const restarted = nextEvent(runtime, (e) => e.type === 'restart' && nameOf(e.pid) === actor('c'));
    faults.failCommits('c', 1);
    await expect(runtime.memory.add('c', [user('lost')])).rejects.toMatchObject({ code: 'write_aborted' });
    await restarted;
    const [record] = await runtime.memory.append('c', [{ message: user('2') }]);
    expect(record!.message_id).toBe(2);
    expect(awake(whereis(actor('c')))).toBe(false);
  });
});
