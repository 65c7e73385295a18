import { languageOf, type Language } from '../../language.ts';
import { factSeq } from '../records/fact-entry.ts';
import { FactConflictError, FactNotFoundError } from '../facts/fact-errors.ts';
import { currentWithKey, nearDuplicateOf } from '../facts/fact-rules.ts';
import { shapeOf } from '../facts/fact-text.ts';
import { ensureFactsConverted, forgetFact, rememberFact, updateFact, writeDocument } from '../facts/facts-service.ts';
import type { FactsView } from '../facts/facts-view.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { searchHybrid } from '../queries/hybrid-search.ts';
import { createSearchMemoryTool } from './search-memory-tool.ts';
import { dailyWindowRows, recentSessionRows, searchDailyRows, searchSessionRows, sessionWindowRows } from '../queries/recall-queries.ts';
import { createMemoryTools, type FactTarget } from './memory-tools.ts';
import { TOOL_TEXTS } from './tool-texts.ts';

/**
 * The tools of one turn, bound to its user and session: the Demo's six, the fact tools, then
 * `search_memory`. `shown`: the entries its `[LONG_TERM]` section showed (`'all'` outside a
 * turn): `remember_note` rewrites the document the model saw, so entries it was never shown
 * stay current. A fact the model names is found by its id, its key, or (nearly) its text.
 * `language`: of Mnemo's tool texts (a turn's own; default the service's, `'auto'` English).
 */
export function turnTools(deps: RecallDeps, userId: string, sessionId: string, shown: ReadonlySet<number> | 'all' = 'all', language: Language = languageOf(deps.language, '')) {
  const source = { via: 'tool', sessionId } as const;
  const t = TOOL_TEXTS[language];
  const demoAndFactTools = createMemoryTools(
    {
      rememberNote: async (note) => {
        const view = await ensureFactsConverted(deps, userId);
        const keep = shown === 'all' ? undefined : new Set([...view.current.keys()].filter((seq) => !shown.has(seq)));
        await writeDocument(deps, userId, note, 'remember_note', keep);
      },
      remember: async (text, key) => {
        const w = await rememberFact(deps, userId, { text, ...(key === undefined ? {} : { key }), source });
        return w.status === 'duplicate' ? t.alreadyRemembered(w.entry.id) : t.stored(w.entry.id);
      },
      updateMemory: async (target, text) => {
        const hit = findFact(await ensureFactsConverted(deps, userId), target);
        if (hit === undefined) return t.noSuchMemory;
        try {
          const w = await updateFact(deps, userId, hit.id, { text, version: hit.version, source });
          return w.status === 'unchanged' ? t.unchanged(w.entry.id) : t.updated(w.entry.id);
        } catch (error) {
          if (error instanceof FactConflictError) return t.changedMeanwhile;
          if (error instanceof FactNotFoundError) return t.noSuchMemory;
          throw error;
        }
      },
      forget: async (target) => {
        const hit = findFact(await ensureFactsConverted(deps, userId), target);
        if (hit === undefined) return t.noSuchMemory;
        try {
          return t.forgotten((await forgetFact(deps, userId, hit.id)).id);
        } catch (error) {
          if (error instanceof FactNotFoundError) return t.noSuchMemory;
          throw error;
        }
      },
      recentSession: (rounds) => recentSessionRows(deps, userId, sessionId, rounds),
      searchSession: (keyword, limit) => searchSessionRows(deps, userId, sessionId, keyword, limit),
      sessionWindow: (id, before, after) => sessionWindowRows(deps, userId, sessionId, id, before, after),
      searchDaily: (keyword, day, limit) => searchDailyRows(deps, userId, keyword, limit, day),
      dailyWindow: (id, before, after, day) => dailyWindowRows(deps, userId, id, before, after, day),
    },
    language,
  );
  return [...demoAndFactTools, createSearchMemoryTool((args) => searchHybrid(deps, { userId, ...args }), language)];
}

/** A current entry named by id, by key, or by (nearly) its text, as the model saw it. */
function findFact(view: FactsView, target: FactTarget) {
  const seq = factSeq(target.id);
  const byId = seq === undefined ? undefined : view.current.get(seq);
  const byRef = byId ?? (target.key === undefined ? undefined : currentWithKey(view.current, target.key));
  if (byRef) return byRef.entry;
  if (target.memory === undefined || target.memory.trim() === '') return undefined;
  return nearDuplicateOf(view.current, shapeOf(target.memory))?.entry;
}
