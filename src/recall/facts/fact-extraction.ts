import type { LlmService } from '../../llm/llm-service.ts';
import { HIGH, type RecallDbs } from '../store/recall-dbs.ts';
import type { ExtractionJob } from './fact-entry.ts';
import { jsonObjectIn } from './fact-judge.ts';

/**
 * Background fact extraction: with a facts model configured, every finished turn is queued
 * (`recall.fact-queue`, key `[userId, sessionId, replyId]`) in the same commit as its reply's
 * daily and log rows, so a turn that answered is never lost to extraction, and the reply never
 * waits for it. A drain, started after the turn and at service start (resuming what a killed
 * process left), asks the model for the turn's durable facts, writes each through the normal
 * fact rules (keys, duplicates, judge) with the turn as source, and then drops the job.
 *
 * - A model error leaves the job queued (the next drain retries it, in queue order).
 * - An answer that is not the JSON asked for drops the job: nothing is extracted.
 * - A crash after some facts were written and before the job was dropped re-runs the job; the
 *   facts it wrote already are duplicates then, and are not stored twice.
 */
export const EXTRACTION_PROMPT = [
  'Extract durable facts about the user from this exchange: preferences, personal details, plans, decisions.',
  'Skip greetings, questions and anything only about this conversation.',
  'Answer with one JSON object and nothing else: {"facts": [{"text": "...", "key": "..."}]}',
  '"text" is one short sentence in the user\'s language; "key" is optional, a stable snake_case name of what the fact is about',
  '(e.g. "favorite_drink"), so a later change of it replaces it. No facts: {"facts": []}.',
].join('\n');

export interface ExtractedFact {
  text: string;
  key?: string;
}

/** Inside the turn's write transaction. */
export function queueExtractionTx(dbs: RecallDbs, userId: string, sessionId: string, replyId: number, job: ExtractionJob): void {
  dbs.factQueue.put([userId, sessionId, replyId], job);
}

/** The oldest queued job (any user), or `undefined`. */
export function nextQueued(dbs: RecallDbs): { key: [string, string, number]; value: ExtractionJob } | undefined {
  for (const item of dbs.factQueue.getRange({ start: [''], end: [HIGH], limit: 1 })) return item;
  return undefined;
}

/** `null`: the model's answer was not the JSON asked for. Throws what the model throws. */
export async function extractFacts(llm: LlmService, job: ExtractionJob, signal?: AbortSignal): Promise<ExtractedFact[] | null> {
  const response = await llm.chat(
    [
      { role: 'system', content: EXTRACTION_PROMPT },
      { role: 'user', content: JSON.stringify({ user: job.user_message, assistant: job.assistant_reply }) },
    ],
    signal ? { signal } : {},
  );
  const facts = jsonObjectIn(response.content)?.['facts'];
  if (!Array.isArray(facts)) return null;
  const out: ExtractedFact[] = [];
  for (const f of facts) {
    if (typeof f !== 'object' || f === null) continue;
    const text = (f as Record<string, unknown>)['text'];
    const key = (f as Record<string, unknown>)['key'];
    if (typeof text !== 'string' || text.trim() === '' || [...text].length > 2000) continue;
    out.push({ text: text.trim(), ...(typeof key === 'string' && key.trim() !== '' && key.length <= 200 ? { key: key.trim() } : {}) });
  }
  return out;
}
