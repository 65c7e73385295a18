import type { Context } from './context.ts';
import { filterState, withFilterState } from './context.ts';
import type { Around, Filter, Phase } from './filter.ts';

/**
 * Runs `request` through the filters that have a hook for `phase`, outermost first, with
 * `terminal` at the core (beamai's `beamai_filter_chain:run`). Errors propagate as thrown.
 */
export function runChain<Req extends { context: Context }, Res extends { context: Context }>(
  filters: readonly Filter[],
  phase: Phase,
  terminal: (request: Req) => Promise<Res>,
  request: Req,
): Promise<Res> {
  let next = terminal;
  for (let i = filters.length - 1; i >= 0; i--) {
    const filter = filters[i]!;
    const hook = filter.hooks[phase] as Around<Req, Res, unknown> | undefined;
    if (!hook) continue;
    const inner = next;
    next = async (req) => {
      const state = filterState(req.context, filter.name, filter.init);
      const out = await hook(req, state, inner);
      if (Array.isArray(out)) {
        const [res, newState] = out as [Res, unknown];
        return { ...res, context: withFilterState(res.context, filter.name, newState) };
      }
      return out;
    };
  }
  return next(request);
}
