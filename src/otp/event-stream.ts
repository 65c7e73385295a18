/**
 * A small typed event stream: synchronous listeners plus `for await` iteration (each
 * iterator buffers what it has not consumed yet). `end()` finishes every iteration.
 */
import type { EventStream } from './tree-events.ts';

export interface EventSource<E> extends EventStream<E> {
  emit(event: E): void;
  end(): void;
}

export function createEventStream<E>(): EventSource<E> {
  const listeners = new Set<(event: E) => void>();
  let ended = false;
  const wakers = new Set<() => void>();

  const subscribe = (listener: (event: E) => void): (() => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };

  return {
    subscribe,
    emit(event) {
      if (ended) return;
      for (const listener of listeners) listener(event);
    },
    end() {
      ended = true;
      for (const wake of wakers) wake();
    },
    [Symbol.asyncIterator](): AsyncIterator<E> {
      const buffer: E[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = subscribe((event) => {
        buffer.push(event);
        wake?.();
      });
      const waker = () => wake?.();
      wakers.add(waker);
      const finish = (): IteratorResult<E> => {
        unsubscribe();
        wakers.delete(waker);
        return { done: true, value: undefined };
      };
      return {
        async next() {
          while (buffer.length === 0) {
            if (ended) return finish();
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
          }
          return { done: false, value: buffer.shift() as E };
        },
        async return() {
          return finish();
        },
      };
    },
  };
}
