/**
 * The context a kernel call runs in (beamai's `beamai_context`): the conversation id, free
 * variables for tools and filters, and each filter's private state keyed by filter name.
 * It never holds messages or history: those belong to the store and the caller.
 * Contexts are immutable values; every helper returns a new one.
 */
export interface Context {
  readonly conversationId: string | undefined;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly filterStates: Readonly<Record<string, unknown>>;
}

export function newContext(init: { conversationId?: string; vars?: Record<string, unknown> } = {}): Context {
  return { conversationId: init.conversationId, vars: { ...init.vars }, filterStates: {} };
}

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
