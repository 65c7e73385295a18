import { errorRecord } from '../../errors.ts';
import type { Language } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import type { FactEntry, FactVerdict, FactVerdictKind } from '../records/fact-entry.ts';

/**
 * The judge: with a model configured, a new fact without a key is compared with the user's
 * most similar current entries (by rankFacts) and the model says whether it is a `duplicate`
 * of one, an `update` of one (the same thing, changed), a `contradiction` of one (cannot both
 * be true: the new one wins), or `new`. It answers one JSON object; anything else (an error, no
 * JSON, an unknown verdict or id) falls back to `new` with `judgeError` recorded (`{code,
 * message}`, the message Mnemo's own: a model error's text goes to `onError` only), and the
 * rules (keys, near-duplicates) still apply in the write. The verdict is kept on the entry.
 * The prompt is in the server's language (language.ts).
 */
const JUDGE_PROMPTS: Record<Language, string> = {
  en: [
    'You maintain a user\'s long-term memory as short facts.',
    'Compare the NEW fact with the EXISTING facts (each has an id).',
    'Answer with one JSON object and nothing else: {"verdict": V, "target": ID}',
    'V is "duplicate" (says the same as an existing fact), "update" (the same subject, changed, e.g. a new preference),',
    '"contradiction" (cannot both be true; the new fact is the current truth) or "new" (unrelated; target null).',
  ].join('\n'),
  zh: [
    '你以简短事实的形式维护用户的长期记忆。',
    '把新事实（new）与已有事实（existing，每条都有 id）进行比较。',
    '只输出一个 JSON 对象，不要输出其他内容：{"verdict": V, "target": ID}',
    'V 取 "duplicate"（与某条已有事实说的相同）、"update"（同一主题发生了变化，例如新的偏好）、',
    '"contradiction"（两者不能同时为真；新事实是当前的真相）或 "new"（无关；target 为 null）。',
  ].join('\n'),
};

export function judgePrompt(language: Language): string {
  return JUDGE_PROMPTS[language];
}

/** The English prompt (what `judgePrompt('en')` answers). */
export const JUDGE_PROMPT = JUDGE_PROMPTS.en;

const VERDICTS: readonly FactVerdictKind[] = ['duplicate', 'update', 'contradiction', 'new'];

export async function judgeFact(
  llm: LlmService,
  text: string,
  candidates: readonly FactEntry[],
  signal?: AbortSignal,
  language: Language = 'en',
  /** Told of the model's error, whole (recall's `onFactsError`). */
  onError: (error: unknown) => void = () => {},
): Promise<FactVerdict> {
  let content: string | null;
  try {
    const response = await llm.chat(
      [
        { role: 'system', content: judgePrompt(language) },
        { role: 'user', content: JSON.stringify({ new: text, existing: candidates.map((c) => ({ id: c.id, text: c.text })) }) },
      ],
      signal ? { signal } : {},
    );
    content = response.content;
  } catch (error) {
    onError(error);
    return { verdict: 'new', by: 'rules', judgeError: errorRecord(error, 'judge_failed') };
  }
  const answer = jsonObjectIn(content);
  const verdict = answer?.['verdict'];
  const target = answer?.['target'];
  if (typeof verdict !== 'string' || !VERDICTS.includes(verdict as FactVerdictKind)) {
    return { verdict: 'new', by: 'rules', judgeError: { code: 'judge_no_verdict', message: 'the judge gave no verdict' } };
  }
  if (verdict === 'new') return { verdict: 'new', by: 'model' };
  if (typeof target !== 'string' || !candidates.some((c) => c.id === target)) {
    return { verdict: 'new', by: 'rules', judgeError: { code: 'judge_unknown_target', message: 'the judge named none of the similar facts' } };
  }
  return { verdict: verdict as FactVerdictKind, target, by: 'model' };
}

/** The first `{...}` JSON object in a model's answer (models wrap JSON in prose or fences). */
export function jsonObjectIn(content: string | null | undefined): Record<string, unknown> | undefined {
  if (typeof content !== 'string') return undefined;
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(content.slice(start, end + 1));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
