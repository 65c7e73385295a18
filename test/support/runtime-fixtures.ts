import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TreeEvent } from '../../src/otp/index.ts';
import { processInfo } from '../../src/otp/index.ts';
import type { Message, StoredMessage } from '../../src/memory/index.ts';
import type { Runtime } from '../../src/runtime.ts';

export function tempDir(prefix = 'mnemo-rt-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const user = (content: string): Message => ({ role: 'user', content });

/** Resolves with the first event of `runtime` matching `test` from now on. */
export function nextEvent(runtime: Runtime, test: (event: TreeEvent) => boolean): Promise<TreeEvent> {
  return new Promise((resolve) => {
    const off = runtime.events.subscribe((event) => {
      if (test(event)) {
        off();
        resolve(event);
      }
    });
  });
}

/** The registered name of the process `pid` (undefined once it is dead). */
export const nameOf = (pid: unknown) => processInfo(pid as never)?.name;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Outcome of one write under load. */
export type Outcome = { conversation: string; tag: string } & ({ ok: true; records: StoredMessage[] } | { ok: false; code: string });

/**
 * The invariants of a conversation's log after any mix of crashes: ids are exactly 1..n;
 * every write that resolved is stored with the ids it was given; no write that was rejected
 * is stored; nothing is stored twice.
 */
export function checkLog(stored: readonly StoredMessage[], outcomes: readonly Outcome[]): void {
  const ids = stored.map((r) => r.message_id);
  const expectedIds = ids.map((_, i) => i + 1);
  if (ids.join() !== expectedIds.join()) throw new Error(`ids are not 1..${ids.length}: ${ids.join()}`);
  const byTag = new Map<string, StoredMessage[]>();
  for (const r of stored) {
    const tag = r.message.content as string;
    if (byTag.has(tag)) throw new Error(`${tag} stored twice`);
    byTag.set(tag, [r]);
  }
  for (const o of outcomes) {
    const found = byTag.get(o.tag);
    if (o.ok) {
      if (found === undefined) throw new Error(`acknowledged write ${o.tag} is missing`);
      if (found[0]!.message_id !== o.records[0]!.message_id) throw new Error(`${o.tag} stored as ${found[0]!.message_id}, acknowledged as ${o.records[0]!.message_id}`);
    } else if (found !== undefined) {
      throw new Error(`rejected write ${o.tag} (${o.code}) was stored`);
    }
  }
}
