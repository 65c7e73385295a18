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
 *
 * The API itself loads when first needed (importing `mnemo` does not pay its 44 modules): the
 * API keeps every registration (tracer provider, context manager, propagator, diag logger) in
 * one global, `globalThis[Symbol.for('opentelemetry.js.api.1')]`, shared by every copy of the
 * API in the process. While that global is absent nothing is registered, every API call here
 * would be a no-op, and so they are skipped (`fn` runs with a non-recording span). Once it is
 * there (checked at each call, so a provider registered after Mnemo started is seen), the API
 * is loaded with `require` (synchronous: spans start inside synchronous code) and used as before.
 */
import type { Attributes, Link, Span, SpanContext, SpanKind, SpanOptions, SpanStatusCode } from '@opentelemetry/api';
import { errorRecord } from '../errors.ts';
import { requireHere } from '../module-location.ts';
import { mnemoVersion } from '../version.ts';

export type { Attributes, Span } from '@opentelemetry/api';

/** The instrumentation scope of every Mnemo span. */
export const TRACER_NAME = 'mnemo';

/** The span kinds Mnemo uses: the API's `SpanKind` values, fixed by the specification. */
export const SPAN_KIND = { INTERNAL: 0 as SpanKind.INTERNAL, CLIENT: 2 as SpanKind.CLIENT } as const;
const STATUS_ERROR = 2 as SpanStatusCode.ERROR;

type OtelApi = typeof import('@opentelemetry/api');
/** Where the API (version 1.x) keeps its registrations; see the contract above. */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let api: OtelApi | undefined;

/** The API once anything registered with it; `undefined` while every call would be a no-op. */
function otel(): OtelApi | undefined {
  if (api === undefined && (globalThis as Record<symbol, unknown>)[API_GLOBAL] !== undefined) api = requireHere('@opentelemetry/api') as OtelApi;
  return api;
}

const INVALID_CONTEXT: SpanContext = { traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 };
/** The span `fn` gets while nothing is registered: records nothing, like the API's own. */
const NOOP_SPAN: Span = {
  spanContext: () => INVALID_CONTEXT,
  setAttribute: () => NOOP_SPAN,
  setAttributes: () => NOOP_SPAN,
  addEvent: () => NOOP_SPAN,
  addLink: () => NOOP_SPAN,
  addLinks: () => NOOP_SPAN,
  setStatus: () => NOOP_SPAN,
  updateName: () => NOOP_SPAN,
  end: () => {},
  isRecording: () => false,
  recordException: () => {},
};

let version: string | undefined;
const tracerOf = (o: OtelApi) => o.trace.getTracer(TRACER_NAME, (version ??= mnemoVersion()));

export interface WithSpanOptions {
  kind?: SpanKind;
  links?: Link[];
  /** Start a new trace instead of a child of the active span. */
  root?: boolean;
}

export function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T> | T, options: WithSpanOptions = {}): Promise<T> {
  const o = otel();
  if (o === undefined) {
    // Nothing to record: `fn`'s own promise, no wrapper (this runs twice per append).
    try {
      return Promise.resolve(fn(NOOP_SPAN));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const run = async (span: Span): Promise<T> => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  };
  const spanOptions: SpanOptions = { attributes, ...options };
  return tracerOf(o).startActiveSpan(name, spanOptions, run);
}

/** Marks `span` failed with `error`'s code and Mnemo's own sentence for it. */
export function failSpan(span: Span, error: unknown): void {
  const record = errorRecord(error, error instanceof Error ? error.name : 'error');
  span.setAttribute('error.type', record.code);
  span.setStatus({ code: STATUS_ERROR, message: record.message });
}

/** `iterable` read inside a span (see the contract above); `observe` sees each item first. */
export async function* tracedStream<E>(
  name: string,
  attributes: Attributes,
  open: () => AsyncIterable<E>,
  observe: (span: Span, item: E) => void,
  options: WithSpanOptions = {},
): AsyncGenerator<E> {
  const o = otel();
  const span = o === undefined ? NOOP_SPAN : tracerOf(o).startSpan(name, { attributes, ...options });
  try {
    for await (const item of o === undefined ? open() : o.context.with(o.trace.setSpan(o.context.active(), span), open)) {
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
  const span = otel()?.trace.getActiveSpan();
  return span === undefined || !span.isRecording() ? undefined : { context: span.spanContext() };
}

/** The options of a background job's span: a new trace, linked to the span noted under `key`. */
export function linkedRoot(key: string): WithSpanOptions {
  const link = links.get(key);
  if (link === undefined) return { root: true, kind: SPAN_KIND.INTERNAL };
  links.delete(key);
  return { root: true, kind: SPAN_KIND.INTERNAL, links: [link] };
}

/** Runs `fn` with no active span. */
export function detached<T>(fn: () => T): T {
  const o = otel();
  return o === undefined ? fn() : o.context.with(o.ROOT_CONTEXT, fn);
}
