import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { spawnAppender, type Ack, type Appender } from '../programs/postgres-children.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';

/**
 * Separate Node processes, each with its own pool, sharing conversations in one database.
 * What a process printed as acked is checked against what the table really holds.
 */
const db = usePostgres();

function useSchema(): string {
  const schema = db.schema('procs');
  return schema;
}

function track(appender: Appender): Appender {
  db.cleanup(async () => {
    if (appender.child.exitCode === null && appender.child.signalCode === null) appender.child.kill('SIGKILL');
    await appender.exited;
  });
  return appender;
}

/** Every row, as `conversation -> [message_id, content][]` in id order. */
async function tableOf(schema: string): Promise<Map<string, Array<[number, string]>>> {
  const rows = await sql<{ conversation_id: string; message_id: string; content: string }>(
    db.url,
    `SELECT conversation_id, message_id, message->>'content' AS content
     FROM ${pg.escapeIdentifier(schema)}.messages ORDER BY conversation_id, message_id`,
  );
  const table = new Map<string, Array<[number, string]>>();
  for (const r of rows) {
    const list = table.get(r.conversation_id) ?? [];
    list.push([Number(r.message_id), r.content]);
    table.set(r.conversation_id, list);
  }
  return table;
}

const contiguous = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Each acked batch is in the table at the ids it was acked with, with its own contents. */
function expectAcksStored(table: Map<string, Array<[number, string]>>, acks: readonly Ack[]): void {
  for (const ack of acks) {
    const rows = table.get(ack.conversation) ?? [];
    for (let k = 0; k < ack.count; k++) {
      expect(rows[ack.firstId + k - 1], `${ack.tag}.${k}`).toEqual([ack.firstId + k, `${ack.tag}.${k}`]);
    }
  }
}

describe('many processes, one database', () => {
  it('four processes appending concurrently to shared conversations get ids 1..N, no gap, no duplicate', async () => {
    const schema = useSchema();
    const conversations = ['shared-a', 'shared-b', 'shared-c'];
    const appenders = await Promise.all(
      [0, 1, 2, 3].map(async (p) =>
        track(await spawnAppender({ url: db.url, schema, conversations, batches: 15, batchSize: 1 + (p % 3), workers: 3, label: `p${p}` })),
      ),
    );
    // All four migrate the fresh schema and start appending at the same moment.
    for (const a of appenders) a.go();
    const codes = await Promise.all(appenders.map((a) => a.exited));
    expect(codes, appenders.map((a) => a.stderr()).join('\n')).toEqual([0, 0, 0, 0]);

    const acks = appenders.flatMap((a) => a.acks);
    expect(acks).toHaveLength(4 * 3 * 15);
    const table = await tableOf(schema);
    expect([...table.keys()].sort()).toEqual(conversations);
    for (const c of conversations) {
      const ackedRows = acks.filter((a) => a.conversation === c).reduce((n, a) => n + a.count, 0);
      expect(table.get(c)!.map(([id]) => id)).toEqual(contiguous(ackedRows));
    }
    expectAcksStored(table, acks);
    // Every process really wrote into every conversation: the ids interleave across processes.
    for (const c of conversations) {
      const writers = new Set(table.get(c)!.map(([, content]) => content.split('.')[0]));
      expect(writers).toEqual(new Set(['p0', 'p1', 'p2', 'p3']));
    }
  }, 60_000);

  it('a process SIGKILLed mid-write loses no acknowledged write, and the ids stay contiguous', async () => {
    const schema = useSchema();
    const conversations = ['kill-a', 'kill-b'];
    const victim = track(await spawnAppender({ url: db.url, schema, conversations, batches: 0, batchSize: 2, workers: 4, label: 'victim' }));
    const survivor = track(await spawnAppender({ url: db.url, schema, conversations, batches: 0, batchSize: 1, workers: 2, label: 'survivor' }));
    victim.go();
    survivor.go();
    await victim.waitFor(() => victim.acks.length >= 40, '40 acks from the victim');
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    // The other process keeps appending to the same conversations after the kill.
    const before = survivor.acks.length;
    await survivor.waitFor(() => survivor.acks.length >= before + 20, '20 more acks from the survivor');
    survivor.child.kill('SIGKILL');
    await survivor.exited;

    const table = await tableOf(schema);
    for (const c of conversations) {
      const ids = (table.get(c) ?? []).map(([id]) => id);
      expect(ids).toEqual(contiguous(ids.length));
    }
    expectAcksStored(table, [...victim.acks, ...survivor.acks]);
  }, 60_000);
});
