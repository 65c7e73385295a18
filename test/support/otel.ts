import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * What an application's OpenTelemetry setup does, for the tests and the tracing bench: a tracer
 * provider exporting to memory, and a context manager on AsyncLocalStorage (the Node SDK's
 * `AsyncLocalStorageContextManager`, in a few lines: that package is not installed), both
 * registered globally (the context manager can be left out). `stop()` unregisters them.
 */
export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

export interface Tracing {
  exporter: InMemorySpanExporter;
  stop(): Promise<void>;
}

/** `contextManager: false`: a tracer provider alone (spans cannot nest across `await` through the API). */
export function startTracing(options: { contextManager?: boolean } = {}): Tracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  if (options.contextManager !== false) context.setGlobalContextManager(new AsyncLocalContextManager());
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
