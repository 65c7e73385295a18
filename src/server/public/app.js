// Mnemo chat page. Talks only to this server's /api; markdown through marked, sanitized by
// DOMPurify, code highlighted by highlight.js, all three served by the server itself (the page
// works with no internet). Behaviour follows the Agent Memory Demo's page: default user
// "demo-user", open the most recent conversation or create one, tool calls in a collapsed panel
// above the reply, "错误: ..." / "网络错误: ..." on failure (in the page's language), and a
// failed turn stored by the server as "错误: {message} ({code})" after a reload.
//
// Beyond the Demo: replies streamed as they are written (POST /api/chat/stream), copy buttons
// on messages and code blocks, stop and regenerate, "edit and resend" as a branch (fork), a
// ranked search box over all memory, structured tool panels (name, arguments as formatted
// JSON, output), a side panel with the user's tool-call timeline (filterable, each call opening
// its turn), the daily view by day, the long-term memory and the supervision tree, "earlier in
// this session" (the session's latest rolling summary, what the model is sent of its older
// part) above its rows, and Chinese or English labels (i18n.js). A user token's user comes
// from GET /api/whoami.
import { marked } from '/static/vendor/marked.esm.js';
import DOMPurify from '/static/vendor/purify.es.mjs';
import hljs from '/static/vendor/highlight.min.js';
import { initialLang, setLang, t, currentLang } from '/static/i18n.js';

marked.setOptions({ gfm: true, breaks: true });
// The page's Content-Security-Policy (security-headers.ts) takes styles and images from this
// server only (images also as data: URLs) and media from nowhere else; markdown in a reply
// naming an inline style or an outside image would only make the browser refuse it and log a
// violation. So a reply keeps neither: no style attribute or element, no media, form or SVG
// elements, and an image from elsewhere becomes a link to it.
const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'select', 'textarea', 'audio', 'video', 'source', 'track', 'picture'],
  FORBID_ATTR: ['style', 'srcset', 'background', 'poster'],
};
const fromHere = (url) => {
  try {
    const parsed = new URL(url, location.href);
    return parsed.protocol === 'data:' || parsed.origin === location.origin;
  } catch {
    return false;
  }
};
function outsideLink(doc, href, text) {
  const link = doc.createElement('a');
  link.href = href;
  link.textContent = text || href;
  link.setAttribute('target', '_blank');
  link.setAttribute('rel', 'noopener noreferrer');
  return link;
}
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  } else if (node.tagName === 'IMG' && node.hasAttribute('src') && !fromHere(node.getAttribute('src'))) {
    // Still inside DOMPurify's inert document: the image was never fetched.
    node.replaceWith(outsideLink(node.ownerDocument, node.getAttribute('src'), node.getAttribute('alt')));
  }
});
// Chromium checks the CSP for an inline style as it parses HTML, even into DOMPurify's inert
// document, so style elements and attributes leave the text before it is parsed at all (what
// these patterns missed, DOMPurify still drops: a miss costs a logged violation, nothing more).
const STYLE_ELEMENT = /<style\b[\s\S]*?(?:<\/style\s*>|$)/gi;
// An unquoted value is taken whole (a lookahead and its backreference: no backtracking into it,
// so a long unclosed tag costs linear time).
const TAG = /<[a-z][^\s/>]*(?:[\s/]+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|(?=([^\s"'=<>`]+))\1))?)*[\s/]*>/gi;
const STYLE_ATTR = /[\s/]+style(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?(?=[\s/>])/gi;
const withoutInlineStyles = (html) => html.replace(STYLE_ELEMENT, '').replace(TAG, (tag) => tag.replace(STYLE_ATTR, ''));
const renderMarkdown = (text) => DOMPurify.sanitize(withoutInlineStyles(marked.parse(String(text ?? ''))), PURIFY);
hljs.configure({ ignoreUnescapedHTML: true });

// The server's id rule (src/recall/recall-ids.ts), checked here to explain a refusal early.
const isId = (s) =>
  s !== '' && [...s].length <= 128 && !/\p{Cc}/u.test(s) && !/^\s|\s$/u.test(s) && s.isWellFormed?.() !== false;
const TOKEN_KEY = 'mnemo.token';
const USER_KEY = 'mnemo.user';
const RUNTIME_POLL_MS = 2000;
const TIMELINE_LIMIT = 200;
// What the server calls an untitled session, in either of its languages.
const UNTITLED_TITLES = new Set(['', '新对话', 'New chat']);

const $ = (id) => document.getElementById(id);
const el = {
  sidebar: $('sidebar'), scrim: $('scrim'), userForm: $('user-form'), userId: $('user-id'),
  newConv: $('new-conv'), convList: $('conv-list'), tokenBox: $('token-box'), lang: $('lang'),
  tokenForm: $('token-form'), token: $('token'), title: $('conv-title'), sub: $('conv-sub'),
  messages: $('messages'), composer: $('composer'), input: $('input'), send: $('send'), stop: $('stop'),
  toggleSidebar: $('toggle-sidebar'), inspector: $('inspector'), closeInspector: $('close-inspector'),
  runtimeTree: $('runtime-tree'), runtimeStatus: $('runtime-status'), runtimeDot: $('runtime-dot'),
  toolsName: $('tools-name'), toolsKeyword: $('tools-keyword'), toolsFilter: $('tools-filter'),
  toolsStatus: $('tools-status'), timeline: $('timeline'),
  dailyDay: $('daily-day'), dailyPrev: $('daily-prev'), dailyNext: $('daily-next'),
  dailyFilter: $('daily-filter'), dailyStatus: $('daily-status'), dailyList: $('daily-list'),
  searchForm: $('search-form'), searchQ: $('search-q'), searchHits: $('search-hits'),
  memAdd: $('mem-add'), memText: $('mem-text'), memKey: $('mem-key'), memList: $('mem-list'),
  memStatus: $('mem-status'),
};
const PANELS = ['tools', 'daily', 'memory', 'runtime'];

const state = {
  userId: 'demo-user',
  sessionId: null,
  conversations: [],
  sending: false,
  /** The running turn's AbortController (the stop button aborts it). */
  abort: null,
  generation: 0, // bumps on user switch so late answers for the old user are dropped
  runtimeTimer: null,
  panel: null,
  toolNames: new Set(),
};

const titleOf = (conv) => (conv && !UNTITLED_TITLES.has(conv.title || '') ? conv.title : t('untitled'));

// ---------------------------------------------------------------------------------------------
// API

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

function formatDetail(detail) {
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).join('.')}: ${d.msg}`).join('; ');
  }
  return typeof detail === 'string' ? detail : JSON.stringify(detail);
}

// Every request says it comes from this page: the server refuses a POST, PUT, PATCH or DELETE
// with neither a JSON body nor this header (another site's page cannot send it).
const SAME_SITE = { 'x-mnemo-request': '1' };

async function api(method, path, body, { signal } = {}) {
  const headers = { accept: 'application/json', ...SAME_SITE };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw failure(res, data);
  return data;
}

function failure(res, data) {
  if (res.status === 401) askForToken();
  return new ApiError(res.status, data && data.detail !== undefined ? formatDetail(data.detail) : res.statusText);
}

const q = (params) => new URLSearchParams(params).toString();

/**
 * The one function that sends a chat turn, over POST /api/chat/stream (Server-Sent Events):
 * `onDelta(textSoFar)` as the reply's text arrives, `onToolCall({name, input})` per call the
 * model makes; resolves with the final `{reply, tool_calls, title}` (the `done` event, the
 * shape of POST /api/chat). A refused request (422, 401, ...) is answered with JSON before any
 * event and throws like `api`; an `error` event throws an ApiError. `signal` aborts the fetch
 * (the stop button): the server then cancels the turn.
 */
async function sendTurn({ userId, sessionId, message, signal, onDelta, onToolCall }) {
  const headers = { accept: 'text/event-stream', 'content-type': 'application/json', ...SAME_SITE };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch('/api/chat/stream', {
    method: 'POST',
    headers,
    signal,
    body: JSON.stringify({ user_id: userId, session_id: sessionId, message }),
  });
  if (!res.ok) {
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    throw failure(res, data);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let partial = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(t('streamEnded'));
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const lines = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) lines.push(line.slice(6));
        }
        const payload = JSON.parse(lines.join('\n'));
        if (event === 'done') return payload;
        if (event === 'error') throw new ApiError(0, formatDetail(payload.detail));
        if (event === 'delta') {
          partial += payload.text;
          onDelta?.(partial);
        } else if (event === 'tool_call') onToolCall?.(payload);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

// ---------------------------------------------------------------------------------------------
// Copying

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Not a secure context, or no permission: the old way.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

function copyButton(getText, labelKey, className = 'act') {
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = `${className} copy`;
  btn.textContent = t('copy');
  btn.setAttribute('aria-label', t(labelKey));
  btn.title = t(labelKey);
  btn.addEventListener('click', async () => {
    const ok = await copyText(getText());
    btn.textContent = ok ? t('copied') : t('copyFailed');
    btn.classList.toggle('done', ok);
    setTimeout(() => {
      btn.textContent = t('copy');
      btn.classList.remove('done');
    }, 1500);
  });
  return btn;
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** `text` as pretty JSON when it is JSON (objects and arrays), else null. */
function prettyJson(text) {
  if (typeof text !== 'string') return JSON.stringify(text, null, 2);
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}

function codeBlock(text, language) {
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  if (language) {
    code.className = `hljs language-${language}`;
    code.innerHTML = hljs.highlight(text, { language, ignoreIllegals: true }).value; // escaped by hljs
  } else {
    code.textContent = text;
  }
  pre.append(code);
  return pre;
}

function toolPanel(toolCalls) {
  const details = element('details', 'tool-calls');
  const summary = document.createElement('summary');
  summary.textContent = t('toolCalls', { count: toolCalls.length });
  const list = element('ol', 'tool-list');
  toolCalls.forEach((call) => {
    const item = element('li', 'tool-call');
    const head = element('div', 'tool-head');
    const name = element('code', 'tool-name', call.name);
    head.append(name);

    const argsLabel = element('div', 'tool-label', t('toolArguments'));
    const args = prettyJson(call.input);
    const argsBlock = args === null ? codeBlock(String(call.input ?? ''), null) : codeBlock(args, 'json');
    argsBlock.classList.add('tool-args');

    const outLabel = element('div', 'tool-label', t('toolOutput'));
    const outText = String(call.output ?? '');
    const outJson = prettyJson(outText);
    const outBlock = outJson === null ? codeBlock(outText || t('toolNoOutput'), null) : codeBlock(outJson, 'json');
    outBlock.classList.add('tool-output');

    item.append(head, argsLabel, argsBlock, outLabel, outBlock);
    list.append(item);
  });
  details.append(summary, list);
  return details;
}

/** Highlights the code blocks of rendered markdown and gives each a language tag and a copy button. */
function enhanceCode(box) {
  for (const code of box.querySelectorAll('pre > code')) {
    const pre = code.parentElement;
    const source = code.textContent;
    const declared = /(?:^|\s)language-([\w+-]+)/.exec(code.className)?.[1];
    if (declared && hljs.getLanguage(declared)) {
      code.innerHTML = hljs.highlight(source, { language: declared, ignoreIllegals: true }).value;
    } else {
      code.innerHTML = hljs.highlightAuto(source).value;
    }
    code.classList.add('hljs');
    const wrap = element('div', 'code-block');
    const head = element('div', 'code-head');
    const lang = element('span', 'code-lang', declared || '');
    head.append(lang, copyButton(() => source, 'copyCode', 'act small'));
    pre.replaceWith(wrap);
    wrap.append(head, pre);
  }
}

/** A new `tag` element with its class and, when given, its text (never parsed as HTML). */
function element(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function bubble(role, messageId) {
  const row = element('div', `msg ${role}`);
  if (messageId !== undefined && messageId !== null) row.dataset.messageId = String(messageId);
  const box = element('div', 'bubble');
  row.append(box);
  return { row, box };
}

function actionBar(row, text) {
  const bar = element('div', 'msg-actions');
  bar.append(copyButton(() => text, 'copyMessage'));
  row.append(bar);
  return bar;
}

function addUserMsg(text, messageId) {
  const { row, box } = bubble('user', messageId);
  box.textContent = text;
  row.dataset.text = text;
  const bar = actionBar(row, text);
  if (typeof messageId === 'number') {
    // Edit and resend: a new session branched just before this message, then the edited text.
    const branch = document.createElement('button');
    branch.type = 'button';
    branch.className = 'act branch';
    branch.textContent = t('branch');
    branch.title = t('branchTitle');
    branch.addEventListener('click', () => branchFrom(messageId, text));
    bar.append(branch);
  }
  el.messages.append(row);
  scrollToEnd();
  return row;
}

function addAssistantMsg(text, toolCalls = [], messageId) {
  const { row, box } = bubble('assistant', messageId);
  if (toolCalls.length > 0) row.insertBefore(toolPanel(toolCalls), box);
  box.classList.add('markdown');
  box.innerHTML = renderMarkdown(text);
  enhanceCode(box);
  actionBar(row, String(text ?? ''));
  el.messages.append(row);
  scrollToEnd();
  return row;
}

function addPending() {
  const { row, box } = bubble('assistant');
  row.classList.add('pending');
  box.innerHTML = '<span class="typing"><i></i><i></i><i></i></span>';
  el.messages.append(row);
  scrollToEnd();
  return row;
}

function addErrorMsg(text, messageId) {
  const { row, box } = bubble('error', messageId);
  box.textContent = text;
  el.messages.append(row);
  scrollToEnd();
  return row;
}

function addNotice(text) {
  const { row, box } = bubble('notice');
  box.textContent = text;
  el.messages.append(row);
  scrollToEnd();
  return row;
}

// A failed turn's stored row (the failed-turn rule): its error, with any tool calls it made.
function addStoredError(error, toolCalls, messageId) {
  const row = addErrorMsg(t('error', { detail: `${error.message} (${error.code})` }), messageId);
  if (toolCalls.length > 0) row.insertBefore(toolPanel(toolCalls), row.firstChild);
  return row;
}

function showEmptyHint() {
  const hint = element('div', 'empty');
  const title = element('div', 'empty-title', t('emptyTitle'));
  const body = document.createElement('div');
  body.textContent = t('emptyBody');
  hint.append(title, body);
  el.messages.append(hint);
}

function scrollToEnd() {
  el.messages.scrollTop = el.messages.scrollHeight;
}

/** One "regenerate" button, on the last reply (or failure) that follows a user message. */
function refreshRegenerate() {
  for (const b of el.messages.querySelectorAll('.act.regen')) b.remove();
  if (state.sending) return;
  const rows = [...el.messages.querySelectorAll('.msg')];
  const last = rows.at(-1);
  if (!last || last.classList.contains('user') || !rows.some((r) => r.classList.contains('user'))) return;
  let bar = last.querySelector('.msg-actions');
  if (!bar) bar = actionBar(last, last.querySelector('.bubble')?.textContent || '');
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = 'act regen';
  btn.textContent = t('regenerate');
  btn.title = t('regenerateTitle');
  btn.addEventListener('click', regenerate);
  bar.append(btn);
}

function formatTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  const now = new Date();
  const sameDay = d.toDateString() === now.toDateString();
  const locale = currentLang() === 'zh' ? 'zh-CN' : 'en';
  return sameDay
    ? d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', hour12: false })
    : d.toLocaleDateString(locale, { month: 'short', day: 'numeric' });
}

function renderConversations() {
  el.convList.replaceChildren();
  for (const conv of state.conversations) {
    const item = element('div', 'conv' + (conv.session_id === state.sessionId ? ' active' : ''));
    item.dataset.sessionId = conv.session_id;

    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'conv-open';
    if (conv.session_id === state.sessionId) open.setAttribute('aria-current', 'true');
    const title = element('span', 'conv-title', titleOf(conv));
    const time = element('span', 'conv-time', formatTime(conv.updated_at));
    open.append(title, time);
    open.addEventListener('click', () => {
      closeSidebar();
      openConversation(conv.session_id);
    });

    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'conv-delete';
    del.title = t('deleteConversation');
    del.setAttribute('aria-label', t('deleteConversationNamed', { title: titleOf(conv) }));
    del.textContent = '×';
    del.addEventListener('click', () => deleteConversation(conv));

    item.append(open, del);
    el.convList.append(item);
  }
}

function setHeader() {
  const conv = state.conversations.find((c) => c.session_id === state.sessionId);
  el.title.textContent = titleOf(conv);
  el.sub.textContent = state.sessionId ? `${state.userId} · ${state.sessionId}` : state.userId;
}

// ---------------------------------------------------------------------------------------------
// Conversations

async function loadConversations() {
  const data = await api('GET', `/api/conversations?${q({ user_id: state.userId })}`);
  const fetched = data.items || [];
  // Keep local placeholders (created, not yet chatted in) at the top, as the demo does.
  const known = new Set(fetched.map((c) => c.session_id));
  const placeholders = state.conversations.filter((c) => c.placeholder && !known.has(c.session_id));
  state.conversations = [...placeholders, ...fetched];
  renderConversations();
  setHeader();
}

async function createConversation() {
  const data = await api('POST', '/api/conversations', { user_id: state.userId });
  state.conversations.unshift({ session_id: data.session_id, title: '', updated_at: '', placeholder: true });
  state.sessionId = data.session_id;
  renderConversations();
  setHeader();
  el.messages.replaceChildren();
  showEmptyHint();
  el.input.focus();
}

/**
 * Opens a session; `anchor` scrolls to one of its messages and marks it: `{messageId}` (the
 * anchors of /messages items, as the timeline and search hits give them) or `{match: {ts,
 * role, content}}` (a daily row, whose own anchor is per day).
 */
async function openConversation(sessionId, anchor) {
  const generation = state.generation;
  state.sessionId = sessionId;
  renderConversations();
  setHeader();
  el.messages.replaceChildren();
  try {
    const data = await api('GET', `/api/conversations/${encodeURIComponent(sessionId)}/messages?${q({ user_id: state.userId })}`);
    if (generation !== state.generation || sessionId !== state.sessionId) return;
    const items = data.items || [];
    if (items.length === 0) showEmptyHint();
    let target = null;
    for (const item of items) {
      let row;
      if (item.role === 'user') row = addUserMsg(item.content, item.message_id);
      else if (item.error) row = addStoredError(item.error, item.tool_calls || [], item.message_id);
      else row = addAssistantMsg(item.content, item.tool_calls || [], item.message_id);
      if (anchor && !target && matchesAnchor(item, anchor)) target = row;
    }
    refreshRegenerate();
    await showSummary(sessionId, generation);
    if (target) {
      target.classList.add('flash');
      target.querySelector('details.tool-calls')?.setAttribute('open', '');
      target.scrollIntoView({ block: 'center' });
    }
  } catch (err) {
    showFailure(err);
  }
}

/**
 * "Earlier in this session": the session's latest rolling summary (GET .../summaries), a
 * collapsed panel above its rows, redrawn in place (kept open if it was); nothing when the
 * session has none. A failure to fetch it leaves the page as it is.
 */
async function showSummary(sessionId, generation) {
  let data;
  try {
    data = await api('GET', `/api/conversations/${encodeURIComponent(sessionId)}/summaries?${q({ user_id: state.userId })}`);
  } catch {
    return;
  }
  if (generation !== state.generation || sessionId !== state.sessionId) return;
  const latest = (data.items || []).at(-1);
  const shown = el.messages.querySelector('.session-summary');
  if (!latest) {
    shown?.remove();
    return;
  }
  const panel = element('details', 'session-summary');
  const head = document.createElement('summary');
  head.textContent = t('earlierInSession');
  const method = t(latest.method === 'llm' ? 'summaryByModel' : 'summaryExtractive');
  const meta = element('div', 'session-summary-meta', t('summaryCovers', { to: latest.to, method }));
  const text = element('div', 'session-summary-text', latest.text);
  panel.append(head, meta, text);
  panel.dataset.summaryId = String(latest.id);
  if (shown) {
    panel.open = shown.open;
    shown.replaceWith(panel);
  } else {
    el.messages.prepend(panel);
  }
}

function matchesAnchor(item, anchor) {
  if (anchor.messageId !== undefined) return item.message_id === Number(anchor.messageId);
  const m = anchor.match;
  return !!m && item.ts === m.ts && item.role === m.role && item.content === m.content;
}

async function deleteConversation(conv) {
  if (!window.confirm(t('confirmDelete', { title: titleOf(conv) }))) return;
  try {
    if (!conv.placeholder) {
      await api('DELETE', `/api/conversations/${encodeURIComponent(conv.session_id)}?${q({ user_id: state.userId })}`);
    }
    state.conversations = state.conversations.filter((c) => c.session_id !== conv.session_id);
    if (conv.session_id === state.sessionId) {
      state.sessionId = null;
      await bootstrap();
    } else {
      renderConversations();
    }
  } catch (err) {
    showFailure(err);
  }
}

async function bootstrap() {
  const generation = ++state.generation;
  el.messages.replaceChildren();
  try {
    await adoptPrincipal();
    if (generation !== state.generation) return;
    await loadConversations();
    if (generation !== state.generation) return;
    if (state.conversations.length === 0) await createConversation();
    else await openConversation(state.conversations[0].session_id);
  } catch (err) {
    showFailure(err);
  }
  refreshPanel();
}

// ---------------------------------------------------------------------------------------------
// Sending, stopping, regenerating

function setSending(sending) {
  state.sending = sending;
  el.send.disabled = sending;
  el.stop.hidden = !sending;
}

async function send() {
  const text = el.input.value.trim();
  if (!text || state.sending) return;
  el.input.value = '';
  autosize();
  await runTurn(text);
}

/** One turn: the user's row, a pending reply, then the answer (or the failure, or "stopped"). */
async function runTurn(text) {
  if (state.sending) return;
  if (!state.sessionId) await createConversation();
  const generation = state.generation;
  const sessionId = state.sessionId;
  const controller = new AbortController();
  state.abort = controller;
  setSending(true);
  refreshRegenerate();
  el.messages.querySelector('.empty')?.remove();
  addUserMsg(text);
  const pending = addPending();
  // The reply is drawn as its deltas arrive, then redrawn whole (with its tool panel) on `done`.
  let live = null;
  const here = () => generation === state.generation && sessionId === state.sessionId;
  const onDelta = (partial) => {
    if (!here()) return;
    if (!live) {
      pending.remove();
      live = bubble('assistant');
      live.box.classList.add('markdown');
      // Marked until `done` redraws it whole: a partial reply can end inside a tag.
      live.row.classList.add('streaming');
      el.messages.append(live.row);
    }
    live.box.innerHTML = renderMarkdown(partial);
    scrollToEnd();
  };
  let answered = false;
  try {
    const data = await sendTurn({ userId: state.userId, sessionId, message: text, signal: controller.signal, onDelta });
    if (generation !== state.generation) return;
    pending.remove();
    live?.row.remove();
    if (sessionId === state.sessionId) addAssistantMsg(data.reply, data.tool_calls || []);
    answered = true;
  } catch (err) {
    pending.remove();
    // What had arrived stays on the page (a stopped or failed turn), no longer live.
    live?.row.classList.remove('streaming');
    showFailure(err);
  } finally {
    if (state.abort === controller) state.abort = null;
    setSending(false);
    refreshRegenerate();
    el.input.focus();
  }
  // The next turn can be sent while the list and panel catch up with this one.
  if (!answered) return;
  try {
    // A summary made after an earlier turn (the one just sent is summarized in the background).
    await showSummary(sessionId, generation);
    await loadConversations();
    if (state.panel === 'tools' || state.panel === 'daily' || state.panel === 'memory') refreshPanel();
  } catch (err) {
    showFailure(err);
  }
}

function stop() {
  state.abort?.abort();
}

/**
 * Sends the last user message again, as a new turn of the same session (the earlier reply
 * stays in the transcript). Replacing it instead is "edit and resend": see branchFrom.
 */
function regenerate() {
  const users = el.messages.querySelectorAll('.msg.user');
  const last = users[users.length - 1];
  if (last) runTurn(last.dataset.text || last.querySelector('.bubble').textContent);
}

/**
 * Edit and resend: branch the session just before a stored user message (POST .../fork; the
 * first message: a new session), open the branch, then send the edited text there, streamed
 * like any turn.
 */
async function branchFrom(messageId, text) {
  if (state.sending) return;
  const edited = window.prompt(t('branchPrompt'), text);
  if (edited === null || !edited.trim()) return;
  try {
    const source = state.sessionId;
    const data =
      messageId > 1
        ? await api('POST', `/api/conversations/${encodeURIComponent(source)}/fork`, { user_id: state.userId, message_id: messageId - 1 })
        : await api('POST', '/api/conversations', { user_id: state.userId });
    await loadConversations();
    await openConversation(data.session_id);
    await runTurn(edited.trim());
  } catch (err) {
    showFailure(err);
  }
}

function showFailure(err) {
  if (err && err.name === 'AbortError') addNotice(t('stopped'));
  else if (err instanceof ApiError) addErrorMsg(t('error', { detail: err.message }));
  else addErrorMsg(t('networkError', { detail: err && err.message ? err.message : String(err) }));
}

function autosize() {
  el.input.style.height = 'auto';
  el.input.style.height = `${Math.min(el.input.scrollHeight, 200)}px`;
}

// ---------------------------------------------------------------------------------------------
// User and token

function switchUser(next) {
  if (!isId(next)) {
    el.userId.setCustomValidity(t('invalidUser'));
    el.userId.reportValidity();
    return;
  }
  el.userId.setCustomValidity('');
  if (next === state.userId) return; // Enter fires both change and submit
  state.userId = next;
  state.sessionId = null;
  state.conversations = [];
  state.toolNames = new Set();
  localStorage.setItem(USER_KEY, next);
  closeSidebar();
  bootstrap();
}

/**
 * A user token acts for one user only: the page takes that user, locks the user switch and
 * hides the runtime panel (the supervision tree is the operator's: GET /api/runtime refuses it).
 */
async function adoptPrincipal() {
  const me = await api('GET', '/api/whoami');
  const locked = me && typeof me.user_id === 'string';
  el.userId.readOnly = locked;
  el.userId.title = locked ? t('userLocked') : '';
  $('toggle-runtime').hidden = locked;
  $('tab-runtime').hidden = locked;
  if (locked && state.panel === 'runtime') setPanel(null);
  if (locked && me.user_id !== state.userId) {
    state.userId = me.user_id;
    state.sessionId = null;
    state.conversations = [];
    state.toolNames = new Set();
    el.userId.value = me.user_id;
    localStorage.setItem(USER_KEY, me.user_id);
  }
}

function askForToken() {
  el.tokenBox.open = true;
  openSidebar();
  el.token.focus();
}

/**
 * `/#token=...` stores the token and removes it from the address bar (fragments never reach the
 * server). A link must not silently swap the token this browser has saved for another (someone
 * else's link would then act as them): a different one is taken only once the user agrees.
 */
function takeTokenFromFragment() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, '', location.pathname + location.search);
  let offered;
  try {
    offered = decodeURIComponent(m[1]);
  } catch {
    return;
  }
  const saved = localStorage.getItem(TOKEN_KEY);
  if (saved && saved !== offered && !window.confirm(t('confirmReplaceToken'))) return;
  localStorage.setItem(TOKEN_KEY, offered);
}

// ---------------------------------------------------------------------------------------------
// Side panel: tool-call timeline, daily view, long-term memory, runtime

function setPanel(name) {
  state.panel = name;
  el.inspector.hidden = name === null;
  for (const p of PANELS) {
    $(`panel-${p}`).hidden = p !== name;
    $(`tab-${p}`).setAttribute('aria-selected', String(p === name));
    $(`tab-${p}`).tabIndex = p === name ? 0 : -1;
  }
  for (const toggle of document.querySelectorAll('.panel-toggle')) {
    toggle.setAttribute('aria-expanded', String(toggle.dataset.panel === name));
  }
  clearInterval(state.runtimeTimer);
  state.runtimeTimer = null;
  if (name === 'runtime') {
    state.runtimeTimer = setInterval(() => {
      if (document.visibilityState === 'visible') pollRuntime();
    }, RUNTIME_POLL_MS);
  }
  refreshPanel();
}

function refreshPanel() {
  if (state.panel === 'tools') loadTimeline();
  else if (state.panel === 'daily') loadDaily();
  else if (state.panel === 'memory') loadMemory();
  else if (state.panel === 'runtime') pollRuntime();
}

function closePanelIfNarrow() {
  if (window.matchMedia('(max-width: 1100px)').matches) setPanel(null);
}

// --- tool-call timeline

let timelineRequest = 0;

async function loadTimeline() {
  const request = ++timelineRequest;
  const tool = el.toolsName.value;
  const keyword = el.toolsKeyword.value.trim();
  el.toolsStatus.textContent = t('loading');
  try {
    const data = await api('GET', `/api/tool-calls?${q({ user_id: state.userId, tool, keyword, limit: TIMELINE_LIMIT })}`);
    if (request !== timelineRequest) return;
    const items = data.items || [];
    for (const item of items) state.toolNames.add(item.name);
    renderToolNames();
    el.timeline.replaceChildren(...items.map(timelineItem));
    el.toolsStatus.textContent = items.length === 0 ? t('noToolCalls') : t('toolCallsCount', { count: items.length });
  } catch (err) {
    if (request !== timelineRequest) return;
    el.toolsStatus.textContent = failureText(err);
  }
}

function renderToolNames() {
  const selected = el.toolsName.value;
  const names = [...state.toolNames].sort();
  const all = document.createElement('option');
  all.value = '';
  all.textContent = t('allTools');
  el.toolsName.replaceChildren(all, ...names.map((n) => {
    const o = document.createElement('option');
    o.value = n;
    o.textContent = n;
    return o;
  }));
  el.toolsName.value = names.includes(selected) ? selected : '';
}

function snippet(text, max = 140) {
  const flat = String(text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function timelineItem(item) {
  const li = document.createElement('li');
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = 'tl-item' + (item.failed ? ' failed' : '');
  btn.dataset.sessionId = item.session_id;
  btn.dataset.messageId = String(item.message_id);
  const title = UNTITLED_TITLES.has(item.title || '') ? t('untitled') : item.title;
  btn.title = t('openTurn', { title });
  const head = element('div', 'tl-head');
  const name = element('code', 'tl-name', item.name);
  const time = element('span', 'tl-time', formatTime(item.ts));
  head.append(name, time);
  const session = element('div', 'tl-session', item.failed ? `${title} · ${t('failedTurn')}` : title);
  const said = element('div', 'tl-said', snippet(item.user_message));
  const args = element('div', 'tl-args', snippet(item.input, 100));
  btn.append(head, session, said, args);
  btn.addEventListener('click', () => {
    closePanelIfNarrow();
    openConversation(item.session_id, { messageId: item.message_id });
  });
  li.append(btn);
  return li;
}

let keywordTimer = null;

// --- daily view

function localDay(date = new Date()) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function shiftDay(day, by) {
  const [y, m, d] = day.split('-').map(Number);
  return localDay(new Date(y, m - 1, d + by));
}

let dailyRequest = 0;

async function loadDaily() {
  const request = ++dailyRequest;
  if (!el.dailyDay.value) el.dailyDay.value = localDay();
  const day = el.dailyDay.value;
  el.dailyStatus.textContent = t('loading');
  try {
    const data = await api('GET', `/api/daily?${q({ user_id: state.userId, day })}`);
    if (request !== dailyRequest) return;
    const items = data.items || [];
    el.dailyList.replaceChildren(...items.map(dailyItem));
    el.dailyStatus.textContent = items.length === 0 ? t('noDailyRows') : t('dailyCount', { day, count: items.length });
  } catch (err) {
    if (request !== dailyRequest) return;
    el.dailyStatus.textContent = failureText(err);
  }
}

function dailyItem(row) {
  const li = element('li', `daily-row ${row.role === 'user' ? 'user' : 'assistant'}`);
  const head = element('div', 'daily-head');
  const role = element('span', 'daily-role', row.role === 'user' ? t('roleUser') : t('roleAssistant'));
  const time = element('span', 'daily-time', String(row.ts || '').slice(11, 16));
  head.append(role, time);
  const text = element('div', 'daily-text', row.error ? t('error', { detail: `${row.error.message} (${row.error.code})` }) : snippet(row.content, 220));
  li.append(head, text);
  if (row.session_id) {
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'act daily-open';
    open.textContent = t('openInSession');
    open.addEventListener('click', () => {
      closePanelIfNarrow();
      openConversation(row.session_id, { match: { ts: row.ts, role: row.role, content: row.content } });
    });
    head.append(open);
  }
  return li;
}

// --- long-term memory: current facts with their history; edit (compare-and-set on the version
// the page shows: a 409 says someone changed it first) and forget.

let memoryRequest = 0;

async function loadMemory() {
  const request = ++memoryRequest;
  const user = state.userId;
  try {
    const [current, history] = await Promise.all([
      api('GET', `/api/memory?${q({ user_id: user })}`),
      api('GET', `/api/memory/history?${q({ user_id: user })}`),
    ]);
    if (request !== memoryRequest || user !== state.userId) return;
    renderMemory(current.items, history.items);
    el.memStatus.textContent = current.items.length === 0 ? t('memEmpty') : t('memCount', { count: current.items.length });
  } catch (err) {
    if (request !== memoryRequest) return;
    el.memStatus.textContent = failureText(err);
  }
}

/** The chain of entries that led to `item` (oldest first), from the history. */
function lineage(item, byId) {
  const chain = [];
  for (let at = byId.get(item.supersedes); at; at = byId.get(at.supersedes)) chain.unshift(at);
  return chain;
}

function renderMemory(items, history) {
  const byId = new Map(history.map((h) => [h.id, h]));
  const rows = items.map((item) => {
    const div = element('div', 'mem-item');
    const text = element('div', 'mem-text', item.text);
    const meta = element('div', 'mem-meta');
    meta.textContent = [item.id, item.key ? t('memKeyShown', { key: item.key }) : null, `v${item.version}`, item.source.via, formatTime(item.valid_from)]
      .filter(Boolean).join(' · ');
    const actions = element('div', 'mem-actions');
    const edit = document.createElement('button');
    edit.type = 'button';
    edit.className = 'ghost';
    edit.textContent = t('memEdit');
    edit.addEventListener('click', () => editMemory(item));
    const forget = document.createElement('button');
    forget.type = 'button';
    forget.className = 'ghost';
    forget.textContent = t('memForget');
    forget.addEventListener('click', () => forgetMemory(item));
    actions.append(edit, forget);
    div.append(text, meta, actions);
    const chain = lineage(item, byId);
    if (chain.length > 0) {
      const details = element('details', 'mem-history');
      const summary = document.createElement('summary');
      summary.textContent = t('memHistory', { count: chain.length });
      const ul = document.createElement('ul');
      for (const old of chain) {
        const li = element('li', 'ended', t('memUntil', { text: old.text, version: old.version, time: formatTime(old.valid_to) }));
        ul.append(li);
      }
      details.append(summary, ul);
      div.append(details);
    }
    return div;
  });
  el.memList.replaceChildren(...rows);
}

async function editMemory(item) {
  const text = window.prompt(t('memEditPrompt'), item.text);
  if (text === null || text.trim() === '' || text === item.text) return;
  try {
    await api('PATCH', `/api/memory/${encodeURIComponent(item.id)}`, { user_id: state.userId, text, version: item.version });
  } catch (err) {
    el.memStatus.textContent = err instanceof ApiError && err.status === 409 ? t('memConflict') : failureText(err);
  }
  await loadMemory();
}

async function forgetMemory(item) {
  try {
    await api('DELETE', `/api/memory/${encodeURIComponent(item.id)}?${q({ user_id: state.userId })}`);
  } catch (err) {
    el.memStatus.textContent = failureText(err);
  }
  await loadMemory();
}

async function rememberFact() {
  const text = el.memText.value.trim();
  if (!text) return;
  const key = el.memKey.value.trim();
  try {
    const data = await api('POST', '/api/memory', { user_id: state.userId, text, ...(key ? { key } : {}) });
    el.memText.value = '';
    await loadMemory();
    if (data.status === 'duplicate') el.memStatus.textContent = t('memDuplicate', { text: data.item.text });
  } catch (err) {
    el.memStatus.textContent = failureText(err);
  }
}

// --- ranked search across every session (GET /api/search); a hit opens its session at the message

async function runSearch() {
  const query = el.searchQ.value.trim();
  if (query === '') {
    el.searchHits.hidden = true;
    el.searchHits.replaceChildren();
    return;
  }
  try {
    const data = await api('GET', `/api/search?${q({ user_id: state.userId, q: query, limit: 20 })}`);
    renderHits(data.items || []);
  } catch (err) {
    el.searchHits.hidden = false;
    el.searchHits.textContent = failureText(err);
  }
}

function renderHits(items) {
  el.searchHits.replaceChildren();
  el.searchHits.hidden = false;
  if (items.length === 0) {
    el.searchHits.textContent = t('noHits');
    return;
  }
  for (const hit of items) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'search-hit';
    const meta = element('span', 'search-hit-meta');
    const role = hit.role === 'user' ? t('roleUser') : hit.role === 'assistant' ? t('roleAssistant') : hit.role;
    meta.textContent = hit.source === 'long_term' ? `${hit.day} · ${t('longTerm')}` : `${hit.day} · ${role}`;
    const text = element('span', 'search-hit-text', hit.snippet);
    b.append(meta, text);
    if (hit.source === 'session') {
      b.addEventListener('click', () => {
        closeSidebar();
        openConversation(hit.session_id, { messageId: hit.message_id });
      });
    } else {
      b.disabled = true;
    }
    el.searchHits.append(b);
  }
}

// --- runtime: the live supervision tree

function pick(node, ...keys) {
  for (const k of keys) if (node[k] !== undefined && node[k] !== null) return node[k];
  return undefined;
}

function stateText(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// A node of the runtime's inspect(): {id, name, pid, type, status, state, restarts,
// mailboxDepth, children}. The root and dynamic children have no id; they show a name or pid.
function renderNode(node, depth = 0) {
  const li = document.createElement('li');
  const box = element('div', 'node');
  const main = element('div', 'node-main');
  const kind = pick(node, 'type', 'kind') || 'worker';
  const label = String(pick(node, 'id', 'name') ?? (depth === 0 ? 'root' : pick(node, 'pid') ?? '?'));
  // Conversation actors are registered as `<runtime>/conversation/<conversation id>`.
  const conversation = /\/conversation\/(?:session\/)?(.+)$/.exec(label);
  const badge = element('span', `kind ${conversation ? 'conversation' : kind}`, conversation ? 'conv' : kind === 'supervisor' ? 'sup' : 'proc');
  const name = element('span', 'node-id', conversation ? conversation[1] : label);
  name.title = label;
  main.append(badge, name);
  const status = String(pick(node, 'status') ?? '');
  if (status) {
    const s = element('span', `status ${status.replace(/[^a-z_-]/gi, '')}`, status);
    main.append(s);
  }
  box.append(main);
  const facts = [];
  const pid = pick(node, 'pid');
  if (typeof pid === 'string' && pid.startsWith('<')) facts.push(pid);
  const nodeState = stateText(pick(node, 'state'));
  if (nodeState) facts.push(nodeState);
  const restarts = pick(node, 'restarts', 'restartCount');
  if (restarts !== undefined) facts.push(t('restarts', { n: restarts }));
  const mailbox = pick(node, 'mailboxDepth', 'mailbox');
  if (mailbox !== undefined) facts.push(t('mailbox', { n: mailbox }));
  if (facts.length) {
    const f = element('div', 'facts', facts.join(' · '));
    box.append(f);
  }
  if (Number(restarts) > 0) box.classList.add('restarted');
  li.append(box);
  const children = pick(node, 'children');
  if (Array.isArray(children) && children.length) {
    const ul = document.createElement('ul');
    for (const child of children) ul.append(renderNode(child, depth + 1));
    li.append(ul);
  }
  return li;
}

function failureText(err) {
  return err instanceof ApiError ? t('error', { detail: err.message }) : t('networkError', { detail: err.message });
}

async function pollRuntime() {
  try {
    const data = await api('GET', '/api/runtime');
    const roots = Array.isArray(data.tree) ? data.tree : [data.tree];
    const ul = document.createElement('ul');
    for (const root of roots) if (root) ul.append(renderNode(root));
    el.runtimeTree.replaceChildren(ul);
    const when = new Date().toLocaleTimeString([], { hour12: false });
    el.runtimeStatus.textContent = t('live', { time: when });
    el.runtimeDot.className = 'dot ok';
  } catch (err) {
    el.runtimeStatus.textContent = failureText(err);
    el.runtimeDot.className = 'dot bad';
  }
}

// ---------------------------------------------------------------------------------------------
// Layout and language

function openSidebar() {
  el.sidebar.classList.add('open');
  el.scrim.hidden = !window.matchMedia('(max-width: 760px)').matches;
}

function closeSidebar() {
  el.sidebar.classList.remove('open');
  el.scrim.hidden = true;
}

/** Relabels everything: the static labels (i18n.js), then what was drawn from data. */
function switchLanguage(lang) {
  setLang(lang);
  el.lang.value = currentLang();
  renderConversations();
  setHeader();
  renderToolNames();
  if (!state.sending && state.sessionId) openConversation(state.sessionId);
  refreshPanel();
}

// ---------------------------------------------------------------------------------------------
// Wiring

el.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  send();
});
el.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
el.input.addEventListener('input', autosize);
el.stop.addEventListener('click', stop);
el.userForm.addEventListener('submit', (e) => {
  e.preventDefault();
  switchUser(el.userId.value.trim());
});
el.userId.addEventListener('change', () => switchUser(el.userId.value.trim()));
el.newConv.addEventListener('click', () => {
  closeSidebar();
  createConversation().catch(showFailure);
});
el.tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const token = el.token.value.trim();
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
  el.tokenBox.open = false;
  bootstrap();
});
el.toggleSidebar.addEventListener('click', () =>
  el.sidebar.classList.contains('open') ? closeSidebar() : openSidebar());
el.scrim.addEventListener('click', closeSidebar);
for (const toggle of document.querySelectorAll('.panel-toggle')) {
  toggle.addEventListener('click', () => setPanel(state.panel === toggle.dataset.panel ? null : toggle.dataset.panel));
}
for (const tab of document.querySelectorAll('[role="tab"]')) {
  tab.addEventListener('click', () => setPanel(tab.dataset.panel));
}
// The tab list's keys: left and right arrows move to the neighbouring (visible) tab, Home and End to the ends.
$('tabs').addEventListener('keydown', (e) => {
  const tabs = [...document.querySelectorAll('[role="tab"]')].filter((tab) => !tab.hidden);
  const at = tabs.indexOf(document.activeElement);
  if (at < 0) return;
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const next = tabs[(to + tabs.length) % tabs.length];
  setPanel(next.dataset.panel);
  next.focus();
});
el.closeInspector.addEventListener('click', () => setPanel(null));
el.toolsFilter.addEventListener('submit', (e) => {
  e.preventDefault();
  loadTimeline();
});
el.toolsName.addEventListener('change', loadTimeline);
el.toolsKeyword.addEventListener('input', () => {
  clearTimeout(keywordTimer);
  keywordTimer = setTimeout(loadTimeline, 250);
});
el.dailyFilter.addEventListener('submit', (e) => e.preventDefault());
el.dailyDay.addEventListener('change', loadDaily);
el.dailyPrev.addEventListener('click', () => {
  el.dailyDay.value = shiftDay(el.dailyDay.value || localDay(), -1);
  loadDaily();
});
el.dailyNext.addEventListener('click', () => {
  el.dailyDay.value = shiftDay(el.dailyDay.value || localDay(), 1);
  loadDaily();
});
el.lang.addEventListener('change', () => switchLanguage(el.lang.value));
el.searchForm.addEventListener('submit', (e) => {
  e.preventDefault();
  runSearch();
});
el.searchQ.addEventListener('search', runSearch);
el.memAdd.addEventListener('submit', (e) => {
  e.preventDefault();
  rememberFact();
});

setLang(initialLang(), { save: false });
el.lang.value = currentLang();
takeTokenFromFragment();
el.token.value = localStorage.getItem(TOKEN_KEY) || '';
const savedUser = localStorage.getItem(USER_KEY);
state.userId = savedUser && isId(savedUser) ? savedUser : 'demo-user';
el.userId.value = state.userId;
bootstrap();
