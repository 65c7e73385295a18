import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { InvalidInputError } from '../errors.ts';
import { addressOf, checkKeyPart, configOf, threadIdOf } from './checkpoint-address.ts';
import { nextChannelVersion } from './channel-version.ts';
import type { CheckpointRow, CheckpointStorage, Version } from './storage/checkpoint-storage.ts';
import { openCheckpointStorage, type LangGraphSource } from './storage/langgraph-source.ts';
import { jsonEqual } from './json-equal.ts';
import type { SerializedPut, SerializedValue, SerializedWrite } from './thread-writer.ts';
import { ThreadWriters } from './thread-writer-router.ts';

/** The saver's own options, beside its `LangGraphSource`. */
export interface MnemoSaverSettings {
  /** Serializer of checkpoints, metadata and writes. Default: LangGraph's `JsonPlusSerializer`. */
  readonly serde?: SerializerProtocol;
  /**
   * How long a thread's writer stays without writes before it passivates. Default 60 000 ms
   * (the runtime's conversation actors' default). A passivated thread costs one head read and
   * one chain read on its next put.
   */
  readonly idleMs?: number;
}

/** What `new MnemoSaver(options)` takes: where the data lives (`LangGraphSource`) and the settings. */
export type MnemoSaverOptions = LangGraphSource & MnemoSaverSettings;

/** `configurable` key asking a put to branch from a checkpoint that is not the head. */
export const FORK_KEY = 'fork';

/**
 * A LangGraph checkpointer on Mnemo's storage: its LMDB environment, or tables in a PostgreSQL
 * schema (`LangGraphSource`; the layouts are in storage/lmdb/ and storage/postgres/).
 *
 * - Writes of a thread go through that thread's writer process (thread-writer.ts): serialized,
 *   durable when the promise resolves (committed and flushed). A put whose parent is no longer
 *   the head of its namespace is refused with `CheckpointConflictError` and writes nothing: of
 *   two runs that read the same state, the second is told instead of silently forking the
 *   history. Re-parenting it onto the head instead would be wrong: its state was computed from
 *   the old head, so the other run's messages would vanish from the new head. To branch on
 *   purpose (time travel, `updateState` on an old checkpoint), pass `configurable.fork = true`;
 *   LangGraph's own forks (`metadata.source === 'fork'`) are branches already.
 * - Channel values are stored once per version, as deltas on their previous version when the
 *   new value extends it (a message list grows by its new messages, not by a full copy).
 * - Reads go straight to the storage and see every write that resolved (on PostgreSQL, from
 *   any process).
 *
 * Channel versions are `<counter>.<random>` strings (channel-version.ts), as in Python
 * LangGraph; LangGraph.js types them as numbers but compares them with `>` only.
 */
export class MnemoSaver extends BaseCheckpointSaver {
  private readonly storage: CheckpointStorage;
  private readonly writers: ThreadWriters;
  private closing: Promise<void> | undefined;

  constructor(options: MnemoSaverOptions) {
    super(options.serde);
    const idleMs = options.idleMs ?? 60_000;
    if (!Number.isFinite(idleMs) || idleMs < 0) throw new InvalidInputError('invalid_option', 'idleMs must be a non-negative number of ms');
    this.storage = openCheckpointStorage(options);
    this.writers = new ThreadWriters({ runtimeName: this.storage.runtimeName, deps: { storage: this.storage, serde: this.serde, idleMs } });
  }

  /**
   * The checkpoint `config` names (`thread_id`, `checkpoint_ns`, and `checkpoint_id`, else the
   * namespace's head), with its pending writes; `undefined` when there is none (or no `thread_id`).
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (config.configurable?.['thread_id'] === undefined) return undefined;
    this.storage.checkOpen();
    const { threadId, checkpointNs, checkpointId } = addressOf(config);
    const id = checkpointId ?? (await this.storage.latestId(threadId, checkpointNs));
    if (id === undefined) {
      // The reader will write a root next: its writer must know the thread looked empty.
      if (checkpointId === undefined) await this.writers.request(threadId, { type: 'saw_empty', ns: checkpointNs });
      return undefined;
    }
    const row = await this.storage.checkpoint(threadId, checkpointNs, id);
    if (row === undefined) return undefined;
    return this.tupleOf(threadId, checkpointNs, id, row, await this.serde.loadsTyped(row.t, row.m));
  }

  /**
   * The checkpoints matching `config` (any of `thread_id`, `checkpoint_ns`, `checkpoint_id`),
   * newest id first (across threads and namespaces too, as SQL savers order them), filtered by metadata (JSON equality), `before` a checkpoint id,
   * at most `limit`.
   */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const configurable = config.configurable ?? {};
    const threadId = configurable['thread_id'] === undefined ? undefined : threadIdOf(configurable['thread_id']);
    const ns = configurable['checkpoint_ns'] === undefined ? undefined : checkKeyPart('checkpoint_ns', configurable['checkpoint_ns'], { allowEmpty: true });
    const onlyId: unknown = configurable['checkpoint_id'];
    const beforeId: unknown = options.before?.configurable?.['checkpoint_id'];
    const before = beforeId === undefined ? undefined : checkKeyPart('checkpoint_id', beforeId);
    const filter = Object.entries(options.filter ?? {}).filter(([, value]) => value !== undefined);
    let remaining = options.limit ?? Infinity;
    if (remaining <= 0) return;
    this.storage.checkOpen();
    for await (const { key, row } of this.storage.list({ threadId, ns, before })) {
      const [t, n, id] = key;
      if (typeof onlyId === 'string' && onlyId !== '' && id !== onlyId) continue;
      const metadata = (await this.serde.loadsTyped(row.t, row.m)) as Record<string, unknown>;
      // Metadata filter: same JSON value (SQL savers compare JSON).
      if (!filter.every(([k, value]) => jsonEqual(metadata[k], value))) continue;
      yield await this.tupleOf(t, n, id, row, metadata);
      if (--remaining <= 0) return;
    }
  }

  /**
   * Writes a checkpoint as a child of the one `config` names, through the thread's writer; resolves
   * once committed and flushed, with the new checkpoint's config.
   *
   * @throws `CheckpointConflictError` (`checkpoint_conflict`) when the named parent is no longer
   * the head (nothing written); pass `configurable.fork = true` to branch on purpose.
   * @throws `InvalidInputError` `invalid_id` for an unusable thread, namespace, checkpoint or
   * channel name.
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const { threadId, checkpointNs, checkpointId: parentId } = addressOf(config);
    const checkpointId = checkKeyPart('checkpoint_id', checkpoint.id);
    const values = (checkpoint.channel_values ?? {}) as Record<string, unknown>;
    const channels = Object.entries(newVersions).map(([channel, version]) => ({
      channel: checkKeyPart('channel', channel),
      version,
      value: Object.prototype.hasOwnProperty.call(values, channel) && values[channel] !== undefined ? values[channel] : undefined,
    }));
    // Serialize now, in the caller's turn: the state is captured as it was at `put`.
    const { channel_values: _values, ...bare } = checkpoint;
    const payload = (async (): Promise<SerializedPut> => {
      const [[type, checkpointBytes], [metadataType, metadataBytes]] = await Promise.all([this.serde.dumpsTyped(bare), this.serde.dumpsTyped(metadata)]);
      if (type !== metadataType) throw new Error(`checkpoint and metadata serialized to different types (${type}, ${metadataType})`);
      return {
        type,
        checkpoint: checkpointBytes,
        metadata: metadataBytes,
        versions: { ...(checkpoint.channel_versions as Record<string, Version>) },
        channels: await Promise.all(
          channels.map(async (c) => ({ channel: c.channel, version: c.version, value: c.value === undefined ? undefined : await this.dump(c.value) })),
        ),
      };
    })();
    payload.catch(() => undefined); // rejected later to the caller, through the writer
    await this.writers.request(threadId, {
      type: 'put',
      ns: checkpointNs,
      checkpointId,
      parentId,
      fork: config.configurable?.[FORK_KEY] === true || metadata.source === 'fork',
      payload,
    });
    return configOf(threadId, checkpointNs, checkpointId);
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const { threadId, checkpointNs, checkpointId } = addressOf(config);
    if (checkpointId === undefined) {
      throw new InvalidInputError('invalid_id', 'putWrites needs config.configurable.checkpoint_id: writes belong to a checkpoint', { field: 'checkpoint_id' });
    }
    const task = checkKeyPart('task_id', taskId);
    const serialized = Promise.all(
      writes.map(
        async ([channel, value], idx): Promise<SerializedWrite> => ({
          taskId: task,
          idx: WRITES_IDX_MAP[channel] ?? idx,
          channel,
          value: await this.dump(value),
          taskPath: taskPath ?? '',
        }),
      ),
    );
    serialized.catch(() => undefined);
    await this.writers.request(threadId, { type: 'put_writes', ns: checkpointNs, checkpointId, writes: serialized });
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.writers.request(threadIdOf(threadId), { type: 'delete_thread' });
  }

  override getNextVersion(current: number | undefined): number {
    // See channel-version.ts: string versions, which LangGraph.js handles but types as numbers.
    return nextChannelVersion(current as string | number | undefined) as unknown as number;
  }

  /** Stop the thread writers (each finishes what it was handed), then release the storage. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.writers.close();
      await this.storage.release();
    })();
    return this.closing;
  }

  private async dump(value: unknown): Promise<SerializedValue> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { type, bytes };
  }

  private async tupleOf(threadId: string, ns: string, id: string, row: CheckpointRow, metadata: unknown): Promise<CheckpointTuple> {
    const checkpoint = (await this.serde.loadsTyped(row.t, row.c)) as Checkpoint;
    checkpoint.channel_values = await this.valuesOf(threadId, ns, checkpoint.channel_versions ?? {});
    if (checkpoint.v < 4 && row.p !== null) await this.migratePendingSends(checkpoint, threadId, ns, row.p);
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      (await this.storage.pendingWrites(threadId, ns, id)).map(async (w) => [w.taskId, w.row.c, await this.serde.loadsTyped(w.row.t, w.row.v)] as CheckpointPendingWrite),
    );
    const tuple: CheckpointTuple = { config: configOf(threadId, ns, id), checkpoint, metadata: metadata as CheckpointMetadata, pendingWrites };
    if (row.p !== null) tuple.parentConfig = configOf(threadId, ns, row.p);
    return tuple;
  }

  private async valuesOf(threadId: string, ns: string, versions: Record<string, Version>): Promise<Record<string, unknown>> {
    const values: Record<string, unknown> = {};
    for (const [channel, stored] of await this.storage.channelValues(threadId, ns, versions)) {
      if (stored === 'empty') continue;
      values[channel] = await this.serde.loadsTyped(stored.type, stored.bytes);
    }
    return values;
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes. */
  private async migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parentId: string): Promise<void> {
    const sends = await Promise.all(
      (await this.storage.pendingWrites(threadId, ns, parentId))
        .filter((w) => w.row.c === TASKS)
        .map((w) => this.serde.loadsTyped(w.row.t, w.row.v)),
    );
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}
