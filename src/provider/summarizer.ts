import { assertLanguage, type Language } from '../language.ts';
import { isFallbackLlm } from '../llm/fallback-llm.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { Message, StoredMessage } from '../message.ts';
import { isoWithOffset, systemWallClock, type WallClock } from '../wall-clock.ts';
import { clipToTokens, extractiveSummary, textOf } from './extractive-summary.ts';
import { InvalidMemoryConfigError } from './provider-errors.ts';
import { SummaryFailedError } from './summary-errors.ts';
import {
  assertSummarizableId,
  latestSummary,
  listSummaries,
  summaryConversationId,
  summaryEntry,
  toSummaryRecord,
  type NewSummary,
  type SummaryRecord,
} from './summary-record.ts';
import { o200kTokenCounter, type TokenCounter } from './token-counter.ts';
import { linkedRoot, linkTo, noteLink, withSpan, type TraceContext } from '../telemetry/tracing.ts';

/**
 * Rolling summaries of conversations in a `MessageLog` (compaction without deletion), the
 * engine under `summaryProvider` and usable on its own (a recall session's log, say).
 *
 * A conversation's non-system messages after the latest summary split in two: the RECENT part,
 * the last `keepLast` whole turns (a turn starts at a user message; messages before the first
 * user message form one), always sent verbatim; and the PENDING part before it. A check
 * (`afterTurn`) reads only what follows the latest summary; when the pending part costs more
 * than `maxTokens`, the model summarizes [previous summary + pending messages] into a new
 * summary covering up to the last pending message, appended to the companion conversation
 * (summary-record.ts). Nothing is deleted from the history. A backlog longer than
 * 4 × `maxTokens` (a long history put under a summarizer) is summarized in steps of at most
 * that much, each building on the last; with `catchUp: 'newest'`, only its newest step is (one
 * model call, whatever the backlog: the summary's `from` then says where it starts, and the
 * older rows stay in the history, summarized by nothing).
 *
 * Without an `llm` (or with `fallbackLlm()`, whose replies are canned) the summary is
 * extractive (extractive-summary.ts). A model's summary longer than `maxTokens` is cut to it.
 *
 * Scheduling: per store and conversation, one summarization at a time, across every
 * summarizer over that store in this process; checks requested while one waits are merged.
 * `afterTurn` returns at once and never throws: a failure goes to `onError` (default
 * `console.warn`) and the next check tries again. `check` is the same check, awaited (a job
 * runs it: it rejects on failure). A summary is stored by `append` only while the latest
 * summary is still the one it builds on: if another writer (another process) added one
 * meanwhile, this one is dropped (the default `append` reads the latest again, then appends to
 * the companion; recall's stores it through its storage port, guarded against erasure).
 */
export interface SummarizerOptions {
  /** The model that writes summaries. Default: none, the extractive summary. */
  llm?: LlmService;
  /** Recorded as the summary's `model`. Default: the service's `model` property if it has a string one, else `'unknown'`. */
  model?: string;
  /** Whole turns kept verbatim after the summary; an integer >= 0, default 4. */
  keepLast?: number;
  /** Budget of the pending part, and the longest summary; an integer > 0, default 2000. */
  maxTokens?: number;
  /** Default: the `o200k_base` tokenizer (`o200kTokenCounter`). */
  countTokens?: TokenCounter;
  /** Default: `console.warn`. */
  onError?: (error: unknown, conversationId: string) => void;
  /** Stamps `at`. Default: the system clock. */
  clock?: WallClock;
  /**
   * Of the instruction and request sent to the model, and of the extractive summary's labels
   * (language.ts). Default `'en'`; the recall service passes its own (default `'zh'`).
   */
  language?: Language;
  /**
   * Stores a summary made on `summary.previous` (the companion record id it builds on, `null`
   * for the first): the record stored, or `undefined` when another summary came first (then
   * nothing is stored and the pass ends). Default: the companion conversation of `log`, after
   * reading its latest again.
   */
  append?: (conversationId: string, summary: NewSummary, traceContext: TraceContext | undefined) => Promise<SummaryRecord | undefined>;
  /** A backlog past 4 × `maxTokens`: `'all'` of it in steps (default), or only its `'newest'` step. */
  catchUp?: 'all' | 'newest';
}

/**
 * A summarizer over one `MessageLog`, from `createSummarizer` (see `SummarizerOptions` for how it
 * decides).
 */
export interface Summarizer {
  /** Schedules a check of `conversationId` (after a turn): returns at once; throws only on a reserved id. */
  afterTurn(conversationId: string): void;
  /**
   * The check `afterTurn` schedules, awaited: summarizes the pending part once it passes
   * `maxTokens`. The newest summary made, or `undefined`; rejects on failure (the model's, a
   * `SummaryFailedError`, the store's). `signal` aborts the model call.
   */
  check(conversationId: string, options?: { signal?: AbortSignal }): Promise<SummaryRecord | undefined>;
  /**
   * Whether a check would summarize now: one read of what follows the latest summary. (A
   * reply not yet stored changes nothing: it belongs to the last turn, which is recent.)
   */
  due(conversationId: string): Promise<boolean>;
  /** Summarizes the pending part now, whatever its size (after any summarization in flight). The newest summary made, or `undefined` when nothing was pending. */
  summarize(conversationId: string): Promise<SummaryRecord | undefined>;
  /** Every summary, oldest first, with provenance. */
  summaries(conversationId: string): Promise<SummaryRecord[]>;
  /** The newest summary: one read of the companion's tail. */
  latest(conversationId: string): Promise<SummaryRecord | undefined>;
  /** Deletes the conversation's summaries, after any summarization in flight (the history is the caller's). */
  forget(conversationId: string): Promise<void>;
  /** Resolves once no summarization of this store is running or queued (e.g. before stopping the runtime). */
  idle(): Promise<void>;
  /** Resolves once no summarization of `conversationId` is running or queued (e.g. before erasing it). */
  settled(conversationId: string): Promise<void>;
}

export const DEFAULT_KEEP_LAST = 4;
export const DEFAULT_SUMMARY_MAX_TOKENS = 2000;
/** A summarization call is sent at most this many times `maxTokens` of messages. */
const STEP_FACTOR = 4;

export const SUMMARY_INSTRUCTION =
  'You maintain the running summary of a long conversation between a user and an assistant. ' +
  'You are given the previous summary (if any) and the messages that came after it. Write the new summary: ' +
  'it replaces the previous one, so carry over everything from it that still matters, and add what the new ' +
  'messages bring: facts about the user, preferences, decisions, names, numbers, results of tool calls, and ' +
  'open questions or tasks. Be concise and factual; write plain text, no preamble. ';

/** The instruction of a summarization call, `SUMMARY_INSTRUCTION` in English. */
export function summaryInstruction(maxTokens: number, language: Language = 'en'): string {
  return language === 'zh'
    ? '你负责维护用户与助手之间一段长对话的滚动摘要。你会收到之前的摘要（如果有）以及其后的新消息。请写出新的摘要：' +
        '它会替换之前的摘要，所以要保留之前摘要中仍然重要的全部内容，再加入新消息带来的信息：关于用户的事实、偏好、决定、' +
        `名字、数字、工具调用的结果，以及尚未解决的问题或任务。简洁、客观；只写纯文本，不要开场白。最多约 ${maxTokens} 个 token。`
    : `${SUMMARY_INSTRUCTION}At most about ${maxTokens} tokens.`;
}

/** Per store, per conversation: the lane of summarization jobs. Shared by every summarizer of the store. */
const lanesByStore = new WeakMap<MessageLog, Map<string, Lane>>();

interface Lane {
  tail: Promise<void>;
  jobs: number;
  /** A check is queued and has not started: another request joins it. */
  checkQueued: boolean;
}

/** The key a turn notes its span under, for the summary its turn causes to link to (telemetry/tracing.ts). */
export function summaryLinkKey(conversationId: string): string {
  return `summary\u0000${conversationId}`;
}

/**
 * A summarizer of the conversations in `log`. Summaries go to each conversation's companion
 * conversation in the same log; the history is never changed.
 *
 * @throws `InvalidMemoryConfigError` (`invalid_memory_config`) for a bad option (`keepLast`,
 * `maxTokens`, `llm`, ...); `InvalidInputError` `invalid_option` for an unknown `language`.
 */
export function createSummarizer(log: MessageLog, options: SummarizerOptions = {}): Summarizer {
  const { keepLast, maxTokens, llm, model, onError, clock, language, newestOnly, countTokens } = resolveSummarizerOptions(options);
  const counter = async (): Promise<TokenCounter> => countTokens ?? (await o200kTokenCounter());
  let lanes = lanesByStore.get(log);
  if (lanes === undefined) lanesByStore.set(log, (lanes = new Map()));
  const byId = lanes;

  const enqueue = <T>(id: string, job: (lane: Lane) => Promise<T>): Promise<T> => {
    let lane = byId.get(id);
    if (lane === undefined) byId.set(id, (lane = { tail: Promise.resolve(), jobs: 0, checkQueued: false }));
    const l = lane;
    l.jobs++;
    const result = l.tail.then(() => job(l));
    l.tail = result.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      if (--l.jobs === 0 && byId.get(id) === l) byId.delete(id);
    });
    return result;
  };

  const append =
    options.append ??
    (async (id: string, summary: NewSummary, traceContext: TraceContext | undefined): Promise<SummaryRecord | undefined> => {
      // Another writer (another process over the same store) may have summarized meanwhile.
      const now = await latestSummary(log, id);
      if ((now?.id ?? null) !== summary.previous) return undefined;
      const [stored] = await log.append(summaryConversationId(id), [summaryEntry(summary)], { traceContext });
      return toSummaryRecord(stored!);
    });

  /** What follows the latest summary: the pending part (and its cost) and the id it covers to. */
  const pendingOf = async (id: string) => {
    const count = await counter();
    const latest = await latestSummary(log, id);
    const rows = await log.range(id, { from: (latest?.to ?? 0) + 1 });
    const split = splitPending(rows, keepLast);
    return { latest, count, cost: split.pending.reduce((sum, r) => sum + count(r.message), 0), ...split };
  };

  /** One pass: read what follows the latest summary; summarize the pending part if due (or forced). */
  const pass = async (id: string, force: boolean, signal?: AbortSignal): Promise<SummaryRecord | undefined> => {
    const { latest: first, count, cost, pending, coveredTo } = await pendingOf(id);
    let latest = first;
    if (pending.length === 0) return undefined;
    if (!force && cost <= maxTokens) return undefined;
    // A summary is made: its own trace, linked to the turn that asked for it (telemetry/tracing.ts).
    return withSpan('mnemo.summary', { 'mnemo.summary.messages': pending.length }, async (_, trace) => {
      let made: SummaryRecord | undefined;
      const all = [...steps(pending, coveredTo, maxTokens * STEP_FACTOR, count)];
      // Catching up on the newest step only: the summary starts at its first row.
      const skipTo = newestOnly && all.length > 1 ? all[all.length - 1] : undefined;
      for (const step of skipTo === undefined ? all : [skipTo]) {
        const text = await summaryText(id, latest?.text, step.messages.map((r) => r.message), count, signal, trace);
        const summary: NewSummary = {
          text,
          from: step === skipTo ? step.messages[0]!.message_id : (latest?.to ?? 0) + 1,
          to: step.to,
          model,
          at: isoWithOffset(clock.now()),
          previous: latest?.id ?? null,
          method: llm === undefined ? 'extractive' : 'llm',
        };
        const stored = await append(id, summary, trace);
        if (stored === undefined) return made;
        latest = stored;
        made = latest;
      }
      return made;
    }, linkedRoot(summaryLinkKey(id)));
  };

  const summaryText = async (
    id: string,
    previous: string | undefined,
    messages: Message[],
    count: TokenCounter,
    signal: AbortSignal | undefined,
    traceContext: TraceContext | undefined,
  ): Promise<string> => {
    if (llm === undefined) return extractiveSummary(previous, messages, maxTokens, count, language);
    const response = await llm.chat(
      [
        { role: 'system', content: summaryInstruction(maxTokens, language) },
        { role: 'user', content: summaryRequest(previous, messages, language) },
      ],
      { signal, traceContext },
    );
    const text = typeof response.content === 'string' ? response.content.trim() : '';
    if (text === '') throw new SummaryFailedError(`the model returned no summary for ${JSON.stringify(id)}`, id);
    return clipToTokens(text, maxTokens, count);
  };

  return {
    afterTurn(id) {
      assertSummarizableId(id);
      const lane = byId.get(id);
      noteLink(summaryLinkKey(id), linkTo());
      if (lane?.checkQueued) return;
      void enqueue(id, async (l) => {
        l.checkQueued = false;
        try {
          await pass(id, false);
        } catch (err) {
          try {
            onError(err, id);
          } catch {
            // A failing logger must not fail anything either.
          }
        }
      });
      byId.get(id)!.checkQueued = true;
    },
    check: async (id, checkOptions = {}) => enqueue(assertSummarizableId(id), () => pass(id, false, checkOptions.signal)),
    due: async (id) => {
      const { pending, cost } = await pendingOf(assertSummarizableId(id));
      return pending.length > 0 && cost > maxTokens;
    },
    summarize: async (id) => enqueue(assertSummarizableId(id), () => pass(id, true)),
    summaries: async (id) => listSummaries(log, assertSummarizableId(id)),
    latest: async (id) => latestSummary(log, assertSummarizableId(id)),
    forget: async (id) => enqueue(assertSummarizableId(id), () => log.clear(summaryConversationId(id))),
    async idle() {
      while (byId.size > 0) await Promise.all([...byId.values()].map((l) => l.tail));
    },
    async settled(id) {
      for (let lane = byId.get(id); lane !== undefined; lane = byId.get(id)) await lane.tail;
    },
  };
}

/**
 * The pending rows (non-system, before the last `keepLast` whole turns) and the last id they
 * cover (just before the recent part, so system messages in between are covered too).
 */
export function splitPending(rows: readonly StoredMessage[], keepLast: number): { pending: StoredMessage[]; coveredTo: number } {
  const body = rows.filter((r) => r.message.role !== 'system');
  let start = body.length;
  let turns = 0;
  while (start > 0 && turns < keepLast) {
    start--;
    if (body[start]!.message.role === 'user') turns++;
  }
  // Fewer user messages than keepLast: everything is recent.
  if (turns < keepLast) start = 0;
  const pending = body.slice(0, start);
  const coveredTo = start < body.length ? body[start]!.message_id - 1 : (rows[rows.length - 1]?.message_id ?? 0);
  return { pending, coveredTo };
}

/** The pending rows in steps of at most `budget` tokens (at least one row each); the last step covers up to `coveredTo`. */
function* steps(pending: StoredMessage[], coveredTo: number, budget: number, count: TokenCounter): Generator<{ messages: StoredMessage[]; to: number }> {
  let step: StoredMessage[] = [];
  let cost = 0;
  for (const r of pending) {
    const c = count(r.message);
    if (step.length > 0 && cost + c > budget) {
      yield { messages: step, to: step[step.length - 1]!.message_id };
      step = [];
      cost = 0;
    }
    step.push(r);
    cost += c;
  }
  if (step.length > 0) yield { messages: step, to: coveredTo };
}

/** The user message of a summarization call: the previous summary, then the new messages as a transcript. */
export function summaryRequest(previous: string | undefined, messages: readonly Message[], language: Language = 'en'): string {
  const zh = language === 'zh';
  const lines = messages.map((m) => {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const calls = m.tool_calls.map((tc) => `${tc.function.name}(${tc.function.arguments})`).join(', ');
      const said = textOf(m);
      return `assistant: ${said ? `${said} ` : ''}[${zh ? '调用' : 'calls'} ${calls}]`;
    }
    if (m.role === 'tool') return `${zh ? '工具结果' : 'tool result'}${m.name ? ` (${m.name})` : ''}: ${m.content}`;
    return `${m.role}: ${textOf(m)}`;
  });
  return zh
    ? `之前的摘要：\n${previous ?? '（无）'}\n\n新消息：\n${lines.join('\n')}`
    : `Previous summary:\n${previous ?? '(none)'}\n\nNew messages:\n${lines.join('\n')}`;
}

function modelOf(llm: LlmService): string {
  const m = (llm as { model?: unknown }).model;
  return typeof m === 'string' && m !== '' ? m : 'unknown';
}

function warn(error: unknown, conversationId: string): void {
  const code = typeof error === 'object' && error !== null && 'code' in error ? ` (${String((error as { code: unknown }).code)})` : '';
  const message = error instanceof Error ? error.message : String(error);
  console.warn(`mnemo: summarizing ${JSON.stringify(conversationId)} failed${code}: ${message}; it is tried again after the next turn`);
}

/** The summarizer's options, each checked and defaulted when the summarizer is made, so a bad one fails there (`InvalidMemoryConfigError`). */
function resolveSummarizerOptions(options: SummarizerOptions) {
  if (typeof options !== 'object' || options === null) throw new InvalidMemoryConfigError('options must be an object', options);
  const { llm, keepLast, maxTokens, countTokens, onError, model, clock, language, append, catchUp } = options;
  if (language !== undefined) assertLanguage(language);
  if (llm !== undefined && (typeof llm !== 'object' || llm === null || typeof llm.chat !== 'function')) {
    throw new InvalidMemoryConfigError('llm must be an LlmService (with chat)', llm);
  }
  if (keepLast !== undefined && (!Number.isInteger(keepLast) || keepLast < 0)) {
    throw new InvalidMemoryConfigError(`keepLast must be an integer >= 0, got ${String(keepLast)}`, keepLast);
  }
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens <= 0)) {
    throw new InvalidMemoryConfigError(`maxTokens must be an integer > 0, got ${String(maxTokens)}`, maxTokens);
  }
  if (countTokens !== undefined && typeof countTokens !== 'function') throw new InvalidMemoryConfigError('countTokens must be a function', countTokens);
  if (onError !== undefined && typeof onError !== 'function') throw new InvalidMemoryConfigError('onError must be a function', onError);
  if (append !== undefined && typeof append !== 'function') throw new InvalidMemoryConfigError('append must be a function', append);
  if (catchUp !== undefined && catchUp !== 'all' && catchUp !== 'newest') throw new InvalidMemoryConfigError(`catchUp must be 'all' or 'newest', got ${String(catchUp)}`, catchUp);
  if (model !== undefined && typeof model !== 'string') throw new InvalidMemoryConfigError('model must be a string', model);
  if (clock !== undefined && (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')) {
    throw new InvalidMemoryConfigError('clock must have now()', clock);
  }
  const service = llm !== undefined && !isFallbackLlm(llm) ? llm : undefined;
  return {
    keepLast: keepLast ?? DEFAULT_KEEP_LAST,
    maxTokens: maxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
    llm: service,
    model: service === undefined ? 'extractive' : (model ?? modelOf(service)),
    onError: onError ?? warn,
    clock: clock ?? systemWallClock,
    language: language ?? 'en',
    newestOnly: catchUp === 'newest',
    countTokens,
  };
}
