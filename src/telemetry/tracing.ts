/**
 * Mnemo's traces, through `@opentelemetry/api` alone: no SDK is bundled, so every span here is
 * a no-op until the application registers a tracer provider. Metrics stay with prom-client
 * (server/metrics.ts).
 *
 * Parents are passed, not activated: a span's parent is the `TraceContext` its caller hands
 * down (a turn's context reaches its model calls, tools and appends through their options),
 * else the active context, read once (so an application's own span still parents a turn).
 * Mnemo never makes its spans active for its own code: with an AsyncLocalStorage context
 * manager the first `run` in a process turns on a hook for every promise (Node 20 and 22),
 * a cost the whole process pays from then on. The one exception is code of the application
 * that runs inside a span (an LLM client's call, a tool's execute: `activate`), so that its
 * auto-instrumented HTTP spans nest there; and only when a context is already active (the
 * application already pays for it). Spans nest the same with no context manager at all.
 *
 * - `withSpan(name, attributes, fn, options)`: runs `fn(span, context)` in a span, `context`
 *   being the one `fn`'s own spans are children of; the span ends when `fn` settles
 *   (`withLeafSpan`: the same for work that starts no span of Mnemo's, no context made for
 *   children). A failure
 *   sets the span's status to ERROR with the error's `ErrorRecord` (its `code` as
 *   `error.type`, Mnemo's own sentence as the status message: never a model provider's words,
 *   the same rule as for what is stored), and is rethrown unchanged.
 * - `tracedStream`: the same for an async iterable: the span lasts from the first `next()` to
 *   the end of the iteration (a consumer's early `return()` ends it too, without an error).
 * - Background work that a turn caused but that outlives it (a summary, an extraction job)
 *   is a trace of its own, LINKED to the turn: `noteLink(key, link)` remembers the turn's span
 *   under a key when the work is queued, `linkedRoot(key)` gives the span options of the job (a
 *   new root with that link). Kept in this process only (at most `MAX_LINKS`, oldest dropped):
 *   a job run after a restart has no link.
 * - `detached(fn)`: runs `fn` outside any active context (a write lane's later steps serve
 *   several callers: a driver's own instrumentation must not nest them under whichever caller's
 *   context scheduled them); nothing to do when none is active.
 *
 * Spans carry ids and counts, never message text or user ids.
 *
 * The API itself loads when first needed (importing `mnemo` does not pay its 44 modules): the
 * API keeps every registration (tracer provider, context manager, propagator, diag logger) in
 * one global, `globalThis[Symbol.for('opentelemetry.js.api.1')]`, shared by every copy of the
 * API in the process. While no tracer provider is registered there (its `trace` entry), every
 * span would be a no-op, and so all span work is skipped (`fn` runs with a non-recording span).
 * Once one is (checked at each call, so a provider registered after Mnemo started is seen),
 * the API is loaded with `require` (synchronous: spans start inside synchronous code).
 */
import type { Attributes, Context, Link, Span, SpanContext, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import { errorRecord } from '../errors.ts';
import { requireHere } from '../module-location.ts';
import { mnemoVersion } from '../version.ts';

export type { Attributes, Span } from '@opentelemetry/api';

/** An OpenTelemetry context handed down to be the parent of Mnemo's spans (see the contract above). */
export type TraceContext = Context;

/** The instrumentation scope of every Mnemo span. */
export const TRACER_NAME = 'mnemo';

/** The span kinds Mnemo uses: the API's `SpanKind` values, fixed by the specification. */
export const SPAN_KIND = { INTERNAL: 0 as SpanKind.INTERNAL, CLIENT: 2 as SpanKind.CLIENT } as const;
const STATUS_ERROR = 2 as SpanStatusCode.ERROR;

type OtelApi = typeof import('@opentelemetry/api');
/** Where the API (version 1.x) keeps its registrations; see the contract above. */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let api: OtelApi | undefined;
/** The registered provider (the API's proxy for it) the tracer below was taken from. */
let tracerOwner: unknown;
let tracer: Tracer | undefined;
let version: string | undefined;

/** The API and Mnemo's tracer while a tracer provider is registered; `undefined` while every span would be a no-op. */
function recording(): { o: OtelApi; tracer: Tracer } | undefined {
  const provider = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[API_GLOBAL]?.trace;
  if (provider === undefined) return undefined;
  const o = (api ??= requireHere('@opentelemetry/api') as OtelApi);
  // A new registration is a new proxy: the tracer is asked for once per provider, not per span.
  if (provider !== tracerOwner) {
    tracer = o.trace.getTracer(TRACER_NAME, (version ??= mnemoVersion()));
    tracerOwner = provider;
  }
  return { o, tracer: tracer! };
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

export interface WithSpanOptions {
  kind?: SpanKind;
  links?: Link[];
  /** Start a new trace instead of a child of `parent`. */
  root?: boolean;
  /** The parent's context. Default: the active one. */
  parent?: TraceContext | undefined;
  /** `fn` is the application's code: make the span active for it while a context is already active (see above). */
  activate?: boolean;
}

interface Started {
  o: OtelApi;
  span: Span;
  parent: TraceContext;
}

/** The span, a child of `options.parent` (default: the active context); none while nothing records. */
function start(name: string, attributes: Attributes, options: WithSpanOptions): Started | undefined {
  const r = recording();
  if (r === undefined) return undefined;
  const parent = options.parent ?? r.o.context.active();
  return { o: r.o, span: r.tracer.startSpan(name, { attributes, kind: options.kind, links: options.links, root: options.root }, parent), parent };
}

/** Whether the application already runs in a context (so making one active costs it nothing new). */
const contextInUse = (o: OtelApi): boolean => o.context.active() !== o.ROOT_CONTEXT;

/** `fn` in a span; it gets the context its own spans are children of. */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span, context: TraceContext | undefined) => Promise<T> | T,
  options: WithSpanOptions = {},
): Promise<T> {
  const s = start(name, attributes, options);
  if (s === undefined) return untraced(fn);
  // Sampled out, the span still carries that decision to its children (a parent-based sampler).
  const inner = s.o.trace.setSpan(s.parent, s.span);
  if (!s.span.isRecording()) return untraced(fn, inner);
  if (options.activate === true && contextInUse(s.o)) return s.o.context.with(inner, settled<T>, undefined, s.span, fn, inner);
  return settled(s.span, fn, inner);
}

/** `withSpan` for work that starts no span of Mnemo's (an append, a model call): no context is made for children. */
export function withLeafSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T> | T, options: WithSpanOptions = {}): Promise<T> {
  const s = start(name, attributes, options);
  if (s === undefined || !s.span.isRecording()) return untraced(fn);
  if (options.activate === true && contextInUse(s.o)) return s.o.context.with(s.o.trace.setSpan(s.parent, s.span), settled<T>, undefined, s.span, fn, undefined);
  return settled(s.span, fn, undefined);
}

/** `fn`'s outcome when nothing records (no provider, or the span sampled out): no wrapper at all. */
function untraced<T>(fn: (span: Span, context: TraceContext | undefined) => Promise<T> | T, inner?: TraceContext): Promise<T> {
  try {
    return Promise.resolve(fn(NOOP_SPAN, inner));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `fn`'s outcome, `span` ended when it settles (marked failed on a failure). One `then` on
 * `fn`'s promise, not an `async` wrapper: a promise less per span, which counts while a
 * context manager's promise hook is on.
 */
function settled<T>(span: Span, fn: (span: Span, context: TraceContext | undefined) => Promise<T> | T, inner: TraceContext | undefined): Promise<T> {
  let outcome: Promise<T> | T;
  try {
    outcome = fn(span, inner);
  } catch (error) {
    failed(span, error);
    return Promise.reject(error);
  }
  // `Promise.resolve` of a native promise is that promise (no new one); a thenable is adopted.
  return Promise.resolve(outcome).then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      throw error;
    },
  );
}

function failed(span: Span, error: unknown): void {
  failSpan(span, error);
  span.end();
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
  const s = start(name, attributes, options);
  const span = s?.span ?? NOOP_SPAN;
  try {
    const items = s !== undefined && options.activate === true && contextInUse(s.o) ? s.o.context.with(s.o.trace.setSpan(s.parent, s.span), open) : open();
    for await (const item of items) {
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

/** Remembers `link` under `key` (nothing when there is none). */
export function noteLink(key: string, link: Link | undefined): void {
  if (link === undefined) return;
  if (links.size >= MAX_LINKS) links.delete(links.keys().next().value!);
  links.set(key, link);
}

/** A link to the span of `context` (default: the active one); none when it does not record. */
export function linkTo(context?: TraceContext): Link | undefined {
  const r = recording();
  if (r === undefined) return undefined;
  const span = r.o.trace.getSpan(context ?? r.o.context.active());
  return span === undefined || !span.isRecording() ? undefined : { context: span.spanContext() };
}

/** The options of a background job's span: a new trace, linked to the span noted under `key`. */
export function linkedRoot(key: string): WithSpanOptions {
  const link = links.get(key);
  if (link === undefined) return { root: true, kind: SPAN_KIND.INTERNAL };
  links.delete(key);
  return { root: true, kind: SPAN_KIND.INTERNAL, links: [link] };
}

/** Runs `fn` with no active context. */
export function detached<T>(fn: () => T): T {
  const o = (globalThis as Record<symbol, unknown>)[API_GLOBAL] === undefined ? undefined : (api ??= requireHere('@opentelemetry/api') as OtelApi);
  return o === undefined || !contextInUse(o) ? fn() : o.context.with(o.ROOT_CONTEXT, fn);
}
