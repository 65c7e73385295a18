/**
 * The runtime's lifecycle event bus (process spawn/exit, supervisor decisions). Listeners
 * are called synchronously; emitting costs one size check when nobody listens, so the
 * message hot path never touches it.
 */
import type { ExitReason } from './exit-reason.ts';
import type { Pid } from './pid.ts';
import type { TreeEvent } from './tree-events.ts';

export type RuntimeEvent =
  | { readonly type: 'spawn'; readonly pid: Pid; readonly name: string | undefined }
  | { readonly type: 'exit'; readonly pid: Pid; readonly name: string | undefined; readonly reason: ExitReason }
  | { readonly type: 'supervisor'; readonly event: TreeEvent };

type Listener = (event: RuntimeEvent) => void;
const listeners = new Set<Listener>();

export function onRuntimeEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function emitRuntimeEvent(event: RuntimeEvent): void {
  if (listeners.size === 0) return;
  for (const listener of listeners) {
    try {
      listener(event);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}
