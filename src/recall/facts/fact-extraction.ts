import type { TraceContext } from '../../telemetry/tracing.ts';
import type { Language } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import type { ExtractPayload } from '../storage/job-queue.ts';
import { ExtractionAnswerError } from './fact-errors.ts';
import { jsonObjectIn } from './fact-judge.ts';

/**
 * Background fact extraction: with a facts model configured, every finished turn is queued (an
 * `extract` job of the job queue) in the same commit as its reply's daily and log rows, so a
 * turn that answered is never lost to extraction, and the reply never waits for it. The worker
 * (extraction-worker.ts) asks the model for the turn's durable facts, writes each through the
 * normal fact rules (keys, duplicates, judge) with the turn as source, and completes the job; a
 * job that fails (a model error, or an answer that is not the JSON asked for) is retried with
 * backoff a bounded number of times, then dead-lettered.
 *
 * The prompt is in the server's language (language.ts); the facts keep the user's language.
 */
const EXTRACTION_PROMPTS: Record<Language, string> = {
  en: [
    'Extract durable facts about the user from this exchange: preferences, personal details, plans, decisions.',
    'Skip greetings, questions and anything only about this conversation.',
    'Answer with one JSON object and nothing else: {"facts": [{"text": "...", "key": "..."}]}',
    '"text" is one short sentence in the user\'s language; "key" is optional, a stable snake_case name of what the fact is about',
    '(e.g. "favorite_drink"), so a later change of it replaces it. No facts: {"facts": []}.',
  ].join('\n'),
  zh: [
    '从这段对话中提取关于用户的长期事实：偏好、个人信息、计划、决定。',
    '跳过问候、提问以及只与本次对话有关的内容。',
    '只输出一个 JSON 对象，不要输出其他内容：{"facts": [{"text": "...", "key": "..."}]}',
    '"text" 是一句简短的话，使用用户的语言；"key" 可选，是该事实所关于的事物的稳定 snake_case 名称',
    '（例如 "favorite_drink"），这样它之后的变更会替换它。没有事实时输出：{"facts": []}。',
  ].join('\n'),
};

export function extractionPrompt(language: Language): string {
  return EXTRACTION_PROMPTS[language];
}

/** The English prompt (what `extractionPrompt('en')` answers). */
export const EXTRACTION_PROMPT = EXTRACTION_PROMPTS.en;

export interface ExtractedFact {
  text: string;
  key?: string;
}

/** The facts of one turn. Throws what the model throws, or `ExtractionAnswerError`. */
export async function extractFacts(
  llm: LlmService,
  job: Pick<ExtractPayload, 'userMessage' | 'assistantReply'>,
  signal?: AbortSignal,
  language: Language = 'en',
  traceContext?: TraceContext,
): Promise<ExtractedFact[]> {
  const response = await llm.chat(
    [
      { role: 'system', content: extractionPrompt(language) },
      { role: 'user', content: JSON.stringify({ user: job.userMessage, assistant: job.assistantReply }) },
    ],
    { signal, traceContext },
  );
  const facts = jsonObjectIn(response.content)?.['facts'];
  if (!Array.isArray(facts)) throw new ExtractionAnswerError();
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
