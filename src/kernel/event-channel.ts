/**
 * An async iterable over a run that reports events through a callback: the bridge from the
 * tool loop (which calls `emit`) to `for await`. Single use, lazy: the run starts at the
 * first `next()`. Events queue until read (a reply's deltas: bounded by the reply). The run's
 * resolved value is the last event; its rejection is thrown from `next()` after the events
 * already queued.
 *
 * Cutting it short (`break`, `return()`) aborts the run's signal with `cutReason` and waits
 * for the run to settle, so what the run stores on a cut is stored when `return()` resolves.
 * `signal` (the caller's) aborts the run too, with its own reason.
 */
export function eventChannel<E>(
  run: (emit: (event: E) => void, signal: AbortSignal) => Promise<E>,
  options: { signal?: AbortSignal | undefined; cutReason: string },
): AsyncIterableIterator<E> {
  const controller = new AbortController();
  const queue: E[] = [];
  let wake: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let settled = false;
  let failure: { error: unknown } | undefined;
  let closed = false;

  const outer = options.signal;
  const onOuterAbort = (): void => controller.abort(outer?.reason);
  const emit = (event: E): void => {
    if (closed) return;
    queue.push(event);
    wake?.();
  };
  const start = (): Promise<void> => {
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    return Promise.resolve()
      .then(() => run(emit, controller.signal))
      .then(
        (last) => emit(last),
        (error: unknown) => {
          failure = { error };
        },
      )
      .finally(() => {
        settled = true;
        outer?.removeEventListener('abort', onOuterAbort);
        wake?.();
      });
  };

  const channel: AsyncIterableIterator<E> = {
    [Symbol.asyncIterator]: () => channel,
    async next(): Promise<IteratorResult<E>> {
      if (closed) return { done: true, value: undefined };
      running ??= start();
      while (queue.length === 0 && !settled) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (queue.length > 0) return { done: false, value: queue.shift()! };
      closed = true;
      if (failure) throw failure.error;
      return { done: true, value: undefined };
    },
    async return(): Promise<IteratorResult<E>> {
      if (!closed) {
        closed = true;
        queue.length = 0;
        if (running && !settled) {
          controller.abort(options.cutReason);
          await running;
        }
      }
      return { done: true, value: undefined };
    },
  };
  return channel;
}
