/**
 * The node-wide bus of supervisor decisions (TreeEvent). Applications subscribe and keep
 * the events of their own tree. Listeners run synchronously; a throwing listener is
 * reported asynchronously and does not disturb the supervisor.
 */
import type { TreeEvent } from './tree-events.ts';

type Listener = (event: TreeEvent) => void;
const listeners = new Set<Listener>();

export function onSupervisorEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function emitSupervisorEvent(event: TreeEvent): void {
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
