import type { AppendOptions, MessageLog } from '../contract/message-log.ts';
import type { ConversationRouter } from './conversation-router.ts';
import type { StorageSlot } from './storage-slot.ts';
import type { MessageTable } from '../contract/message-table.ts';
import { validatedLog } from '../contract/validated-log.ts';
import { validateLastId, type ConditionalClear } from '../contract/conditional-clear.ts';
import { validateConversationId } from '../contract/validate-input.ts';
import { withLeafSpan } from '../../telemetry/tracing.ts';

/**
 * `runtime.memory`: the runtime's store as a `MessageLog`. Arguments are validated here, at
 * the boundary. Writes (`add`, `append`, `clear`, `fork`: the new conversation's) go through the conversation's actor, via the
 * router; they resolve once committed and flushed. Reads go straight to the store's table
 * (waiting only while the store itself restarts), and see every write that has resolved.
 * An append is one span, `mnemo.memory.append`, from the call until its commit is durable.
 */
export function createRoutedLog(router: ConversationRouter, slot: StorageSlot): MessageLog & ConditionalClear {
  // A read is the table's own promise while the table is up (no `async` wrapper: promises
  // count while a context manager's promise hook is on); it waits only while the store restarts.
  const read = <R>(f: (t: MessageTable) => Promise<R>): Promise<R> => {
    const t = slot.current();
    return t === undefined ? slot.whenTable().then(f) : f(t);
  };
  const traced = <R>(entries: readonly unknown[], options: AppendOptions, write: () => Promise<R>): Promise<R> =>
    withLeafSpan('mnemo.memory.append', { 'mnemo.memory.messages': entries.length }, write, { parent: options.traceContext });
  const log = validatedLog({
    checkOpen() {},
    get: (c) => read((t) => t.messages(c)),
    append: (c, entries, options) => traced(entries, options, () => router.append(c, entries, options)),
    add: (c, entries, options) => traced(entries, options, () => router.add(c, entries, options)),
    clear: (c) => router.clear(c),
    fork: (source, at, newId) => router.fork(newId, source, at),
    range: (c, q) => read((t) => t.range(c, q.from, q.to, q.limit)),
    tail: (c, n) => read((t) => t.tail(c, n)),
    systemMessages: (c) => read((t) => t.systemMessages(c)),
    lastId: (c) => read((t) => t.lastId(c)),
  });
  return {
    ...log,
    clearIfLastId: async (c, lastId) => router.clearIfLastId(validateConversationId(c), validateLastId(lastId)),
  };
}
