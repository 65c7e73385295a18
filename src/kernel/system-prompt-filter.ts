import type { SystemMessage } from '../message.ts';
import { createFilter, type Filter } from './filter.ts';

/**
 * Puts the system prompts in front of the messages. The kernel adds it as the INNERMOST
 * filter of a call, so it sees the history the memory filter expanded, and no filter can
 * store it: the system prompt is never written to memory.
 */
export function systemPromptFilter(prompts: readonly SystemMessage[]): Filter {
  return createFilter('system_prompt', {
    aroundChat: (request, _state, next) => next({ ...request, messages: [...prompts, ...request.messages] }),
  });
}

export function toSystemMessages(prompts: readonly (string | SystemMessage)[] | undefined): SystemMessage[] {
  return (prompts ?? []).map((p) => (typeof p === 'string' ? { role: 'system', content: p } : p));
}
