import type { Language } from '../../language.ts';

/**
 * What the model reads of Mnemo's own tools (`remember`, `update_memory`, `forget`,
 * `search_memory`), in the server's language (language.ts): their descriptions, the line each
 * answers, and the labels of a search hit. The Demo's six tools are not here: their
 * descriptions and outputs are the Demo's own (English) texts in every language, byte for
 * byte (memory-tools.ts), since the Demo's Chinese mode sent exactly those.
 */
export interface ToolTexts {
  remember: string;
  updateMemory: string;
  forget: string;
  searchMemory: string;
  nothingToRemember: string;
  nothingToUpdate: string;
  stored(id: string): string;
  alreadyRemembered(id: string): string;
  updated(id: string): string;
  unchanged(id: string): string;
  forgotten(id: string): string;
  noSuchMemory: string;
  changedMeanwhile: string;
  noMatchedMemory: string;
  /** `session 3f2a #12 user`, `daily #45 user`, `long-term line 3`, then ` (score 4.21): `. */
  hitSession(sessionId: string, messageId: number, role: string): string;
  hitDaily(messageId: number, role: string): string;
  hitLongTerm(line: number): string;
  hitScore(score: string): string;
}

export const TOOL_TEXTS: Record<Language, ToolTexts> = {
  en: {
    remember:
      'Remember one durable fact about the user (one short sentence). Give a key (e.g. favorite_drink) when the fact can change later: a new fact with the same key replaces the old one.',
    updateMemory: 'Change one remembered fact. Name it by id, key, or its current text (memory); text is the new fact.',
    forget: 'Forget one remembered fact (it is no longer true). Name it by id, key, or its current text (memory).',
    searchMemory:
      'Ranked search over ALL past sessions, days and long-term memory of this user, by relevance. ' +
      'Use a natural-language query or keywords; returns dated hits with message_id anchors.',
    nothingToRemember: 'nothing to remember',
    nothingToUpdate: 'nothing to update',
    stored: (id) => `stored ${id}`,
    alreadyRemembered: (id) => `already remembered: ${id}`,
    updated: (id) => `updated ${id}`,
    unchanged: (id) => `unchanged ${id}`,
    forgotten: (id) => `forgotten ${id}`,
    noSuchMemory: 'no such memory',
    changedMeanwhile: 'the memory changed meanwhile; read it again',
    noMatchedMemory: 'no matched memory',
    hitSession: (s, id, role) => `session ${s} #${id} ${role}`,
    hitDaily: (id, role) => `daily #${id} ${role}`,
    hitLongTerm: (line) => `long-term line ${line}`,
    hitScore: (score) => ` (score ${score}): `,
  },
  zh: {
    remember:
      '记住关于用户的一条长期事实（一句简短的话）。这条事实以后可能变化时给出 key（例如 favorite_drink）：之后 key 相同的新事实会替换旧的。',
    updateMemory: '修改一条已记住的事实。用 id、key 或它现在的文字（memory）指明是哪一条；text 是新的事实。',
    forget: '忘记一条已记住的事实（它不再成立）。用 id、key 或它现在的文字（memory）指明是哪一条。',
    searchMemory:
      '按相关度检索这个用户全部过往会话、每日记录和长期记忆。' + '可以用自然语言的问题或关键词；返回带日期和 message_id 锚点的结果。',
    nothingToRemember: '没有要记住的内容',
    nothingToUpdate: '没有要修改的内容',
    stored: (id) => `已记住 ${id}`,
    alreadyRemembered: (id) => `已经记住过：${id}`,
    updated: (id) => `已修改 ${id}`,
    unchanged: (id) => `没有变化 ${id}`,
    forgotten: (id) => `已忘记 ${id}`,
    noSuchMemory: '没有这条记忆',
    changedMeanwhile: '这条记忆刚被修改过，请重新读取',
    noMatchedMemory: '没有匹配的记忆',
    hitSession: (s, id, role) => `会话 ${s} #${id} ${role}`,
    hitDaily: (id, role) => `每日记录 #${id} ${role}`,
    hitLongTerm: (line) => `长期记忆第 ${line} 行`,
    hitScore: (score) => `（相关度 ${score}）：`,
  },
};
