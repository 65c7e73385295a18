import type { AppendOptions, NewEntry } from '../../../memory/contract/message-log.ts';
import type { StoredMessage } from '../../../message.ts';
import type { RecallDeps } from '../../recall-deps.ts';
import { commit } from './recall-dbs.ts';

/**
 * Appends session rows and runs `work` (recall writes that depend on their ids) in ONE commit
 * when the session store lives in recall's environment (`deps.sharedCommits`): `work` is issued
 * as a recall transaction from the append's `onNumbered` hook, in the event turn of the rows'
 * write, so lmdb-js commits and flushes both in one transaction (all or nothing, one fsync).
 * The conversation actor still numbers the rows (one writer per conversation, ids gap-free).
 *
 * Otherwise (another store, or a store that did not call the hook), `work` commits on its
 * own after the rows are durable, as two commits in that order.
 *
 * Resolves once both are committed and flushed; rejects with the first failure (with a shared
 * commit, neither is stored then).
 *
 * `idempotencyKey`: the rows are appended exactly once under it (MessageLog idempotency). A
 * retry answered from the key gets the first attempt's records and the hook is not called, so
 * `work` then commits on its own, given those records: `work` must be safe to run again for
 * rows it may already have been committed with (chat turns' are: a mirrored row is skipped).
 */
export async function appendWithCommit<T>(
  deps: RecallDeps,
  conversationId: string,
  entries: readonly NewEntry[],
  work: (records: readonly StoredMessage[]) => T,
  /** Called once the rows are stored (before `work`'s commit, when that is apart). */
  onStored?: () => void,
  idempotencyKey?: string,
): Promise<[StoredMessage[], T]> {
  let riding: Promise<T> | undefined;
  const options: AppendOptions = idempotencyKey === undefined ? {} : { idempotencyKey };
  if (deps.sharedCommits) {
    options.onNumbered = (records) => {
      riding = commit(deps.dbs, () => work(records));
      // Awaited below; this only keeps a rejection seen before then from being unhandled.
      riding.catch(() => undefined);
    };
  }
  let records: StoredMessage[];
  try {
    records = await deps.memory.append(conversationId, entries, options);
  } catch (error) {
    if (riding !== undefined) await riding.catch(() => undefined);
    throw error;
  }
  onStored?.();
  const result = await (riding ?? commit(deps.dbs, () => work(records)));
  return [records, result];
}
