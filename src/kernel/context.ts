/**
 * The context a kernel call runs in (beamai's `beamai_context`): the conversation id, free
 * variables for tools and filters, and each filter's private state keyed by filter name.
 * It never holds messages or history: those belong to the store and the caller.
 * Contexts are immutable values; every helper returns a new one.
 */
export interface Context {
  /** The conversation the call belongs to; `undefined` when none was set. */
  readonly conversationId: string | undefined;
  /** Free variables for tools and filters (`newContext({ vars })`). */
  readonly vars: Readonly<Record<string, unknown>>;
  /** Each filter's private state, by filter name (see `createFilter`). */
  readonly filterStates: Readonly<Record<string, unknown>>;
}

/** A fresh context: the given conversation id and variables, no filter state. */
export function newContext(init: { conversationId?: string; vars?: Record<string, unknown> } = {}): Context {
  return { conversationId: init.conversationId, vars: { ...init.vars }, filterStates: {} };
}

/** A copy of `context` with conversation id `id`. */
export function withConversationId(context: Context, id: string): Context {
  return { ...context, conversationId: id };
}

/** `undefined` when the context has no conversation id. */
export function conversationId(context: Context): string | undefined {
  return context.conversationId;
}

export function withVar(context: Context, key: string, value: unknown): Context {
  return { ...context, vars: { ...context.vars, [key]: value } };
}

/** The filter's saved state, or `fallback` (its `init`) when it has none yet. */
export function filterState(context: Context, name: string, fallback: unknown): unknown {
  return Object.hasOwn(context.filterStates, name) ? context.filterStates[name] : fallback;
}

export function withFilterState(context: Context, name: string, state: unknown): Context {
  return { ...context, filterStates: { ...context.filterStates, [name]: state } };
}
