/**
 * Mnemo's traces, through `@opentelemetry/api` alone: no SDK is bundled, so every span here is
 * a no-op until the application registers a tracer provider (and, for spans to nest across
 * `await`, a context manager: the Node SDK registers both). Metrics stay with prom-client
 * (server/metrics.ts).
 *
 * - `withSpan(name, attributes, fn)`: runs `fn` inside a span that is the active one for
 *   everything `fn` starts (the spans of model calls, tools and writes nest under a turn's);
 *   the span ends when `fn` settles. A failure sets the span's status to ERROR with the
 *   error's `ErrorRecord` (its `code` as `error.type`, Mnemo's own sentence as the status
 *   message: never a model provider's words, the same rule as for what is stored), and is
 *   rethrown unchanged.
 * - `tracedStream`: the same for an async iterable: the span lasts from the first `next()` to
 *   the end of the iteration (a consumer's early `return()` ends it too, without an error).
 * - Background work that a turn caused but that outlives it (a summary, an extraction job)
 *   is a trace of its own, LINKED to the turn: `noteLink(key)` remembers the active span under
 *   a key when the work is queued, `linkedRoot(key)` gives the span options of the job (a new
 *   root with that link). Kept in this process only (at most `MAX_LINKS`, oldest dropped): a
 *   job run after a restart has no link.
 * - `detached(fn)`: runs `fn` outside any trace (a write lane's later steps serve several
 *   callers: they must not nest under whichever caller's context scheduled them).
 *
 * Spans carry ids and counts, never message text or user ids.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanOptions } from '@opentelemetry/api';
import { errorRecord } from '../errors.ts';
import { mnemoVersion } from '../version.ts';

export type { Attributes, Span } from '@opentelemetry/api';

/** The instrumentation scope of every Mnemo span. */
export const TRACER_NAME = 'mnemo';

let version: string | undefined;
const tracer = () => trace.getTracer(TRACER_NAME, (version ??= mnemoVersion()));

export interface WithSpanOptions {
  kind?: SpanKind;
  links?: Link[];
  /** Start a new trace instead of a child of the active span. */
  root?: boolean;
}

export function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T> | T, options: WithSpanOptions = {}): Promise<T> {
  const spanOptions: SpanOptions = { attributes, ...options };
  return tracer().startActiveSpan(name, spanOptions, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks `span` failed with `error`'s code and Mnemo's own sentence for it. */
export function failSpan(span: Span, error: unknown): void {
  const record = errorRecord(error, error instanceof Error ? error.name : 'error');
  span.setAttribute('error.type', record.code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: record.message });
}

/** `iterable` read inside a span (see the contract above); `observe` sees each item first. */
export async function* tracedStream<E>(
  name: string,
  attributes: Attributes,
  open: () => AsyncIterable<E>,
  observe: (span: Span, item: E) => void,
  options: WithSpanOptions = {},
): AsyncGenerator<E> {
  const span = tracer().startSpan(name, { attributes, ...options });
  try {
    for await (const item of context.with(trace.setSpan(context.active(), span), open)) {
      observe(span, item);
      yield item;
    }
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export const MAX_LINKS = 10_000;
const links = new Map<string, Link>();

/** Remembers the active span under `key` (nothing when no span is recording). */
export function noteLink(key: string, link: Link | undefined = currentLink()): void {
  if (link === undefined) return;
  if (links.size >= MAX_LINKS) links.delete(links.keys().next().value!);
  links.set(key, link);
}

/** A link to the active span (none when not recording): taken before work whose own spans would be active when `noteLink` runs. */
export function currentLink(): Link | undefined {
  const span = trace.getActiveSpan();
  return span === undefined || !span.isRecording() ? undefined : { context: span.spanContext() };
}

/** The options of a background job's span: a new trace, linked to the span noted under `key`. */
export function linkedRoot(key: string): WithSpanOptions {
  const link = links.get(key);
  if (link === undefined) return { root: true, kind: SpanKind.INTERNAL };
  links.delete(key);
  return { root: true, kind: SpanKind.INTERNAL, links: [link] };
}

/** Runs `fn` with no active span. */
export function detached<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}
