import { conversationName, messageAt } from '../records.ts';
import { diskUsage, withTempDir, type DiskUsage } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Bytes on disk per message: C conversations of M messages appended through each durable
 * store's normal append path (so LangGraph writes its checkpoint per message), then the store is
 * closed and its directory measured: allocated blocks (what `du` reports) and apparent size,
 * divided by the message count. A store still appending after `capSeconds` stops there (its
 * conversations all about as deep) and its row says so. A store kept by a server (PostgreSQL) reports its own bytes
 * (`footprint`) before it closes. The payload column is the UTF-8 size of the contents alone.
 *
 * Then, for a store with its own compaction (`info.compaction`: SQLite's VACUUM, Mnemo's
 * `compact`), the same store compacted: reopened, compacted, closed and measured again (a
 * server's store in place, before it closes): the bytes a store at rest needs once its own
 * maintenance has run, beside the bytes it holds as written.
 */
export const diskWorkload: Workload = {
  id: 'disk',
  title: 'Bytes on disk per message',
  async run(ctx) {
    const started = performance.now();
    const { conversations, perConversation, capSeconds } = ctx.sizes.disk;
    const total = conversations * perConversation;
    const rows: ResultRow[] = [];
    for (const factory of ctx.adapters.filter((a) => a.info.durable)) {
      const step = ctx.progress.step(`disk ${factory.info.label} @ ${total} msgs`, total);
      const usage = await withTempDir(factory.info.id, async (dir) => {
        const adapter = await factory.open(dir);
        const deadline = performance.now() + capSeconds * 1000;
        let footprint: DiskUsage | undefined;
        let compacted: DiskUsage | undefined;
        let written = 0;
        let payload = 0;
        try {
          await Promise.all(
            Array.from({ length: conversations }, async (_, c) => {
              for (let i = 0; i < perConversation && performance.now() < deadline; i++) {
                const message = messageAt(c, i);
                await adapter.append(conversationName('conv', c), message);
                written++;
                payload += Buffer.byteLength(message.content);
                step.tick();
              }
            }),
          );
          footprint = await adapter.footprint?.();
          if (footprint !== undefined && adapter.compact !== undefined) {
            await adapter.compact();
            compacted = await adapter.footprint?.();
          }
        } finally {
          await adapter.close();
        }
        const asWritten = footprint ?? diskUsage(dir);
        if (footprint === undefined && factory.info.compaction !== undefined) {
          const reopened = await factory.open(dir);
          try {
            await reopened.compact?.();
          } finally {
            await reopened.close();
          }
          compacted = diskUsage(dir);
        }
        return { ...asWritten, written, payload, compacted };
      });
      step.done();
      const { written, payload } = usage;
      rows.push({
        adapter: factory.info.id,
        x: total,
        metrics: {
          bytesPerMessage: usage.allocatedBytes / written,
          apparentPerMessage: usage.apparentBytes / written,
          payloadPerMessage: payload / written,
          overhead: usage.allocatedBytes / payload,
          ...(usage.compacted === undefined ? {} : { compactedPerMessage: usage.compacted.allocatedBytes / written }),
          files: usage.files,
          messages: written,
        },
        ...(written < total ? { note: `capped at ${capSeconds} s after ${written} of ${total} appends: bytes per message of those` } : {}),
      });
    }
    return {
      id: 'disk',
      title: this.title,
      description: `Disk space per message after ${conversations} conversations × ${perConversation} messages were appended one by one and the store was closed. Lower is better.`,
      xLabel: 'messages',
      params: { conversations, perConversation, capSeconds },
      columns: [
        { key: 'bytesPerMessage', label: 'allocated B/msg', digits: 0 },
        { key: 'apparentPerMessage', label: 'apparent B/msg', digits: 0 },
        { key: 'payloadPerMessage', label: 'payload B/msg', digits: 0 },
        { key: 'overhead', label: 'allocated ÷ payload', digits: 2 },
        { key: 'compactedPerMessage', label: 'compacted B/msg', digits: 0 },
        { key: 'files', label: 'files', digits: 0 },
        { key: 'messages', label: 'written', digits: 0 },
      ],
      ratios: [
        { metric: 'bytesPerMessage', baseline: 'mnemo-lmdb', label: 'size ÷ Mnemo' },
        { metric: 'compactedPerMessage', baseline: 'mnemo-lmdb', label: 'compacted ÷ Mnemo' },
      ],
      rows,
      charts: [{ file: 'disk-bytes.svg', kind: 'bars', title: 'Allocated bytes on disk per message', metric: 'bytesPerMessage', yLabel: 'bytes/message (log)', logY: true }],
      notes: [
        'LangGraph stores the whole history in every checkpoint, so its bytes per message grow with the conversation length (here ' + `${perConversation}` + ' messages per conversation).',
        'In-memory stores are not measured.',
        ...ctx.adapters.filter((a) => a.info.compaction !== undefined && rows.some((r) => r.adapter === a.info.id)).map((a) => `${a.info.label}, compacted: ${a.info.compaction}.`),
        ...(rows.some((r) => r.adapter === 'mnemo-postgres') ? ['Mnemo (PostgreSQL): its schema\'s relations (tables, indexes, TOAST) by pg_total_relation_size; "files" counts tables; the server\'s WAL is not counted.'] : []),
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
