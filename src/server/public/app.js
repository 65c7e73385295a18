// Mnemo chat page. Talks only to this server's /api; markdown through marked, sanitized by
// DOMPurify, both served by the server itself. Behaviour follows the Agent Memory Demo's page:
// default user "demo-user", open the most recent conversation or create one, tool calls in a
// collapsed panel above the reply, "错误: ..." / "网络错误: ..." on failure, and a failed turn
// stored by the server as "错误: {message} ({code})" after a reload.
import { marked } from '/static/vendor/marked.esm.js';
import DOMPurify from '/static/vendor/purify.es.mjs';

marked.setOptions({ gfm: true, breaks: true });
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

// The server's id rule (src/recall/recall-ids.ts), checked here to explain a refusal early.
const isId = (s) =>
  s !== '' && [...s].length <= 128 && !/\p{Cc}/u.test(s) && !/^\s|\s$/u.test(s) && s.isWellFormed?.() !== false;
const TOKEN_KEY = 'mnemo.token';
const USER_KEY = 'mnemo.user';
const RUNTIME_POLL_MS = 2000;

const $ = (id) => document.getElementById(id);
const el = {
  sidebar: $('sidebar'), scrim: $('scrim'), userForm: $('user-form'), userId: $('user-id'),
  newConv: $('new-conv'), convList: $('conv-list'), tokenBox: $('token-box'),
  tokenForm: $('token-form'), token: $('token'), title: $('conv-title'), sub: $('conv-sub'),
  messages: $('messages'), composer: $('composer'), input: $('input'), send: $('send'),
  toggleSidebar: $('toggle-sidebar'), toggleRuntime: $('toggle-runtime'), runtime: $('runtime'),
  closeRuntime: $('close-runtime'), runtimeTree: $('runtime-tree'), runtimeStatus: $('runtime-status'),
  runtimeDot: $('runtime-dot'),
  searchForm: $('search-form'), searchQ: $('search-q'), searchHits: $('search-hits'),
  memory: $('memory'), toggleMemory: $('toggle-memory'), closeMemory: $('close-memory'),
  memAdd: $('mem-add'), memText: $('mem-text'), memKey: $('mem-key'), memList: $('mem-list'),
  memStatus: $('mem-status'),
};

const state = {
  userId: 'demo-user',
  sessionId: null,
  conversations: [],
  sending: false,
  generation: 0, // bumps on user switch so late answers for the old user are dropped
  runtimeTimer: null,
};

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

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
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

// One chat turn over POST /api/chat/stream: `onEvent(name, data)` for each Server-Sent Event
// as it arrives (delta, tool_call, tool_result, done, error). A refused request (422, 401, ...)
// is answered with JSON before any event and throws like `api`.
async function streamTurn(body, onEvent) {
  const headers = { accept: 'text/event-stream', 'content-type': 'application/json' };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch('/api/chat/stream', { method: 'POST', headers, body: JSON.stringify(body) });
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
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        onEvent(event, JSON.parse(data.join('\n')));
      }
    }
  } finally {
    reader.releaseLock();
  }
}

const q = (params) => new URLSearchParams(params).toString();

// ---------------------------------------------------------------------------------------------
// Rendering

function toolCallsText(toolCalls) {
  const parts = toolCalls.map((c, i) => `${i + 1}. ${c.name}\n- 输入: ${c.input}\n- 输出: ${c.output}`);
  return `### 工具调用\n${parts.join('\n--------------------\n')}`;
}

function toolPanel(toolCalls) {
  const details = document.createElement('details');
  details.className = 'tool-calls';
  const summary = document.createElement('summary');
  summary.textContent = `工具调用 (${toolCalls.length})`;
  const pre = document.createElement('pre');
  pre.textContent = toolCallsText(toolCalls);
  details.append(summary, pre);
  return details;
}

function bubble(role) {
  const row = document.createElement('div');
  row.className = `msg ${role}`;
  const box = document.createElement('div');
  box.className = 'bubble';
  row.append(box);
  return { row, box };
}

function addUserMsg(text, messageId) {
  const { row, box } = bubble('user');
  box.textContent = text;
  if (typeof messageId === 'number') {
    // Edit and resend: a new session branched just before this message, then the edited text.
    const branch = document.createElement('button');
    branch.type = 'button';
    branch.className = 'branch';
    branch.textContent = '编辑并重发';
    branch.title = 'Branch from here: edit this message and resend it in a new conversation';
    branch.addEventListener('click', () => branchFrom(messageId, text));
    row.append(branch);
  }
  el.messages.append(row);
  scrollToEnd();
  return row;
}

function addAssistantMsg(text, toolCalls = []) {
  const { row, box } = bubble('assistant');
  if (toolCalls.length > 0) row.insertBefore(toolPanel(toolCalls), box);
  box.classList.add('markdown');
  box.innerHTML = DOMPurify.sanitize(marked.parse(String(text ?? '')));
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

function addErrorMsg(text) {
  const { row, box } = bubble('error');
  box.textContent = text;
  el.messages.append(row);
  scrollToEnd();
  return row;
}

// A failed turn's stored row (the failed-turn rule): its error, with any tool calls it made.
function addStoredError(error, toolCalls) {
  const row = addErrorMsg(`错误: ${error.message} (${error.code})`);
  if (toolCalls.length > 0) row.insertBefore(toolPanel(toolCalls), row.firstChild);
  return row;
}

function showEmptyHint() {
  const hint = document.createElement('div');
  hint.className = 'empty';
  hint.innerHTML = '<div class="empty-title">开始一段对话</div>'
    + '<div>消息会持久保存：重启服务器后依然在这里。</div>';
  el.messages.append(hint);
}

function scrollToEnd() {
  el.messages.scrollTop = el.messages.scrollHeight;
}

function formatTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  const now = new Date();
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false })
    : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

function renderConversations() {
  el.convList.replaceChildren();
  for (const conv of state.conversations) {
    const item = document.createElement('div');
    item.className = 'conv' + (conv.session_id === state.sessionId ? ' active' : '');
    item.dataset.sessionId = conv.session_id;

    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'conv-open';
    const title = document.createElement('span');
    title.className = 'conv-title';
    title.textContent = conv.title || '新对话';
    const time = document.createElement('span');
    time.className = 'conv-time';
    time.textContent = formatTime(conv.updated_at);
    open.append(title, time);
    open.addEventListener('click', () => {
      closeSidebar();
      openConversation(conv.session_id);
    });

    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'conv-delete';
    del.title = '删除对话';
    del.setAttribute('aria-label', `删除对话 ${conv.title || ''}`);
    del.textContent = '×';
    del.addEventListener('click', () => deleteConversation(conv));

    item.append(open, del);
    el.convList.append(item);
  }
}

function setHeader() {
  const conv = state.conversations.find((c) => c.session_id === state.sessionId);
  el.title.textContent = conv ? conv.title || '新对话' : '新对话';
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
  state.conversations.unshift({ session_id: data.session_id, title: '新对话', updated_at: '', placeholder: true });
  state.sessionId = data.session_id;
  renderConversations();
  setHeader();
  el.messages.replaceChildren();
  showEmptyHint();
  el.input.focus();
}

async function openConversation(sessionId, focusMessageId = null) {
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
    for (const item of items) {
      const row = item.role === 'user'
        ? addUserMsg(item.content, item.message_id)
        : item.error
          ? addStoredError(item.error, item.tool_calls || [])
          : addAssistantMsg(item.content, item.tool_calls || []);
      row.dataset.messageId = String(item.message_id);
    }
    if (focusMessageId !== null) focusMessage(focusMessageId);
  } catch (err) {
    showFailure(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Ranked search across every session (GET /api/search); a hit opens its session at the message.

function focusMessage(messageId) {
  const row = el.messages.querySelector(`[data-message-id="${Number(messageId)}"]`);
  if (!row) return;
  row.classList.add('hit');
  row.scrollIntoView({ block: 'center' });
  setTimeout(() => row.classList.remove('hit'), 2500);
}

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
    el.searchHits.textContent = `错误: ${err.message}`;
  }
}

function renderHits(items) {
  el.searchHits.replaceChildren();
  el.searchHits.hidden = false;
  if (items.length === 0) {
    el.searchHits.textContent = '没有找到';
    return;
  }
  for (const hit of items) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'search-hit';
    const meta = document.createElement('span');
    meta.className = 'search-hit-meta';
    meta.textContent = hit.source === 'long_term' ? `${hit.day} · 长期记忆` : `${hit.day} · ${hit.role}`;
    const text = document.createElement('span');
    text.className = 'search-hit-text';
    text.textContent = hit.snippet;
    b.append(meta, text);
    if (hit.source === 'session') {
      b.addEventListener('click', () => {
        closeSidebar();
        openConversation(hit.session_id, hit.message_id);
      });
    } else {
      b.disabled = true;
    }
    el.searchHits.append(b);
  }
}

// Edit and resend: branch the session just before a stored user message (POST .../fork; the
// first message: a new session), then send the edited text there, streamed like any turn.
async function branchFrom(messageId, text) {
  if (state.sending) return;
  const edited = window.prompt('编辑消息后重新发送（在新的分支对话中）', text);
  if (edited === null || !edited.trim()) return;
  try {
    const source = state.sessionId;
    const data =
      messageId > 1
        ? await api('POST', `/api/conversations/${encodeURIComponent(source)}/fork`, { user_id: state.userId, message_id: messageId - 1 })
        : await api('POST', '/api/conversations', { user_id: state.userId });
    await loadConversations();
    await openConversation(data.session_id);
    el.input.value = edited.trim();
    await send();
  } catch (err) {
    showFailure(err);
  }
}

async function deleteConversation(conv) {
  if (!window.confirm(`删除对话「${conv.title || '新对话'}」？此操作不可撤销。`)) return;
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
}

// ---------------------------------------------------------------------------------------------
// Sending

async function send() {
  const text = el.input.value.trim();
  if (!text || state.sending) return;
  if (!state.sessionId) await createConversation();
  const generation = state.generation;
  const sessionId = state.sessionId;
  state.sending = true;
  el.send.disabled = true;
  el.input.value = '';
  autosize();
  el.messages.querySelector('.empty')?.remove();
  addUserMsg(text);
  const pending = addPending();
  // The reply is drawn as its deltas arrive, then redrawn whole (with its tool panel) on `done`.
  let live = null;
  let partial = '';
  const here = () => generation === state.generation && sessionId === state.sessionId;
  try {
    let data = null;
    await streamTurn({ user_id: state.userId, session_id: sessionId, message: text }, (event, payload) => {
      if (event === 'done') data = payload;
      else if (event === 'error') throw new ApiError(0, formatDetail(payload.detail));
      else if (event === 'delta' && here()) {
        partial += payload.text;
        if (!live) {
          pending.remove();
          live = bubble('assistant');
          live.box.classList.add('markdown');
          // Marked until `done` redraws it whole: a partial reply can end inside a tag.
          live.row.classList.add('streaming');
          el.messages.append(live.row);
        }
        live.box.innerHTML = DOMPurify.sanitize(marked.parse(partial));
        scrollToEnd();
      }
    });
    if (data === null) throw new Error('the reply stream ended early');
    if (generation !== state.generation) return;
    pending.remove();
    live?.row.remove();
    if (sessionId === state.sessionId) addAssistantMsg(data.reply, data.tool_calls || []);
    await loadConversations();
    if (!el.memory.hidden) loadMemory();
  } catch (err) {
    pending.remove();
    showFailure(err);
  } finally {
    state.sending = false;
    el.send.disabled = false;
    el.input.focus();
  }
}

function showFailure(err) {
  if (err instanceof ApiError) addErrorMsg(`错误: ${err.message}`);
  else addErrorMsg(`网络错误: ${err && err.message ? err.message : String(err)}`);
}

function autosize() {
  el.input.style.height = 'auto';
  el.input.style.height = `${Math.min(el.input.scrollHeight, 200)}px`;
}

// ---------------------------------------------------------------------------------------------
// User and token

function switchUser(next) {
  if (!isId(next)) {
    el.userId.setCustomValidity('用户 ID：1-128 个字符，不含控制字符，首尾不能是空格');
    el.userId.reportValidity();
    return;
  }
  el.userId.setCustomValidity('');
  if (next === state.userId) return; // Enter fires both change and submit
  state.userId = next;
  state.sessionId = null;
  state.conversations = [];
  localStorage.setItem(USER_KEY, next);
  closeSidebar();
  bootstrap();
  if (!el.memory.hidden) loadMemory();
}

/** A user token acts for one user only: the page takes that user and locks the user switch. */
async function adoptPrincipal() {
  const me = await api('GET', '/api/whoami');
  const locked = me && typeof me.user_id === 'string';
  el.userId.readOnly = locked;
  el.userId.title = locked ? '此令牌只属于这个用户' : '';
  if (locked && me.user_id !== state.userId) {
    state.userId = me.user_id;
    state.sessionId = null;
    state.conversations = [];
    el.userId.value = me.user_id;
    localStorage.setItem(USER_KEY, me.user_id);
  }
}

function askForToken() {
  el.tokenBox.open = true;
  openSidebar();
  el.token.focus();
}

/** `/#token=...` stores the token and removes it from the address bar (fragments never reach the server). */
function takeTokenFromFragment() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!m) return;
  localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  history.replaceState(null, '', location.pathname + location.search);
}

// ---------------------------------------------------------------------------------------------
// Runtime view: the live supervision tree

function pick(node, ...keys) {
  for (const k of keys) if (node[k] !== undefined && node[k] !== null) return node[k];
  return undefined;
}

function stateText(state) {
  if (state === undefined || state === null) return '';
  return typeof state === 'string' ? state : JSON.stringify(state);
}

// A node of the runtime's inspect(): {id, name, pid, type, status, state, restarts,
// mailboxDepth, children}. The root and dynamic children have no id; they show a name or pid.
function renderNode(node, depth = 0) {
  const li = document.createElement('li');
  const box = document.createElement('div');
  box.className = 'node';
  const main = document.createElement('div');
  main.className = 'node-main';
  const kind = pick(node, 'type', 'kind') || 'worker';
  const label = String(pick(node, 'id', 'name') ?? (depth === 0 ? 'root' : pick(node, 'pid') ?? '?'));
  // Conversation actors are registered as `<runtime>/conversation/<conversation id>`.
  const conversation = /\/conversation\/(?:session\/)?(.+)$/.exec(label);
  const badge = document.createElement('span');
  badge.className = `kind ${conversation ? 'conversation' : kind}`;
  badge.textContent = conversation ? 'conv' : kind === 'supervisor' ? 'sup' : 'proc';
  const name = document.createElement('span');
  name.className = 'node-id';
  name.textContent = conversation ? conversation[1] : label;
  name.title = label;
  main.append(badge, name);
  const status = String(pick(node, 'status') ?? '');
  if (status) {
    const s = document.createElement('span');
    s.className = `status ${status.replace(/[^a-z_-]/gi, '')}`;
    s.textContent = status;
    main.append(s);
  }
  box.append(main);
  const facts = [];
  const pid = pick(node, 'pid');
  if (typeof pid === 'string' && pid.startsWith('<')) facts.push(pid);
  const state = stateText(pick(node, 'state'));
  if (state) facts.push(state);
  const restarts = pick(node, 'restarts', 'restartCount');
  if (restarts !== undefined) facts.push(`重启 ${restarts}`);
  const mailbox = pick(node, 'mailboxDepth', 'mailbox');
  if (mailbox !== undefined) facts.push(`邮箱 ${mailbox}`);
  if (facts.length) {
    const f = document.createElement('div');
    f.className = 'facts';
    f.textContent = facts.join(' · ');
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

async function pollRuntime() {
  try {
    const data = await api('GET', '/api/runtime');
    const roots = Array.isArray(data.tree) ? data.tree : [data.tree];
    const ul = document.createElement('ul');
    for (const root of roots) if (root) ul.append(renderNode(root));
    el.runtimeTree.replaceChildren(ul);
    const when = new Date().toLocaleTimeString([], { hour12: false });
    el.runtimeStatus.textContent = `实时 · ${when}`;
    el.runtimeDot.className = 'dot ok';
  } catch (err) {
    el.runtimeStatus.textContent = err instanceof ApiError ? `错误: ${err.message}` : `网络错误: ${err.message}`;
    el.runtimeDot.className = 'dot bad';
  }
}

function setRuntimeOpen(open) {
  if (open && !el.memory.hidden) setMemoryOpen(false);
  el.runtime.hidden = !open;
  el.toggleRuntime.setAttribute('aria-expanded', String(open));
  clearInterval(state.runtimeTimer);
  state.runtimeTimer = null;
  if (open) {
    pollRuntime();
    state.runtimeTimer = setInterval(() => {
      if (document.visibilityState === 'visible') pollRuntime();
    }, RUNTIME_POLL_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// Long-term memory: current facts with their history; edit (compare-and-set on the version the
// page shows: a 409 says someone changed it first) and forget.

async function loadMemory() {
  const user = state.userId;
  try {
    const [current, history] = await Promise.all([
      api('GET', `/api/memory?${q({ user_id: user })}`),
      api('GET', `/api/memory/history?${q({ user_id: user })}`),
    ]);
    if (user !== state.userId) return;
    renderMemory(current.items, history.items);
    el.memStatus.textContent = current.items.length === 0 ? '还没有长期记忆' : `${current.items.length} 条`;
  } catch (err) {
    el.memStatus.textContent = err instanceof ApiError ? `错误: ${err.message}` : `网络错误: ${err.message}`;
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
    const div = document.createElement('div');
    div.className = 'mem-item';
    const text = document.createElement('div');
    text.className = 'mem-text';
    text.textContent = item.text;
    const meta = document.createElement('div');
    meta.className = 'mem-meta';
    meta.textContent = [item.id, item.key ? `键 ${item.key}` : null, `v${item.version}`, item.source.via, formatTime(item.valid_from)]
      .filter(Boolean).join(' · ');
    const actions = document.createElement('div');
    actions.className = 'mem-actions';
    const edit = document.createElement('button');
    edit.type = 'button';
    edit.className = 'ghost';
    edit.textContent = '编辑';
    edit.addEventListener('click', () => editMemory(item));
    const forget = document.createElement('button');
    forget.type = 'button';
    forget.className = 'ghost';
    forget.textContent = '忘记';
    forget.addEventListener('click', () => forgetMemory(item));
    actions.append(edit, forget);
    div.append(text, meta, actions);
    const chain = lineage(item, byId);
    if (chain.length > 0) {
      const details = document.createElement('details');
      details.className = 'mem-history';
      const summary = document.createElement('summary');
      summary.textContent = `历史 (${chain.length})`;
      const ul = document.createElement('ul');
      for (const old of chain) {
        const li = document.createElement('li');
        li.className = 'ended';
        li.textContent = `${old.text} (v${old.version}, 至 ${formatTime(old.valid_to)})`;
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
  const text = window.prompt('新的内容', item.text);
  if (text === null || text.trim() === '' || text === item.text) return;
  try {
    await api('PATCH', `/api/memory/${encodeURIComponent(item.id)}`, { user_id: state.userId, text, version: item.version });
  } catch (err) {
    el.memStatus.textContent = err instanceof ApiError && err.status === 409 ? '它已被别处修改，已刷新' : `错误: ${err.message}`;
  }
  await loadMemory();
}

async function forgetMemory(item) {
  try {
    await api('DELETE', `/api/memory/${encodeURIComponent(item.id)}?${q({ user_id: state.userId })}`);
  } catch (err) {
    el.memStatus.textContent = `错误: ${err.message}`;
  }
  await loadMemory();
}

function setMemoryOpen(open) {
  el.memory.hidden = !open;
  el.toggleMemory.setAttribute('aria-expanded', String(open));
  if (open) {
    setRuntimeOpen(false);
    loadMemory();
  }
}

// ---------------------------------------------------------------------------------------------
// Layout

function openSidebar() {
  el.sidebar.classList.add('open');
  el.scrim.hidden = !window.matchMedia('(max-width: 760px)').matches;
}

function closeSidebar() {
  el.sidebar.classList.remove('open');
  el.scrim.hidden = true;
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
el.searchForm.addEventListener('submit', (e) => {
  e.preventDefault();
  runSearch();
});
el.searchQ.addEventListener('search', runSearch);
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
el.toggleRuntime.addEventListener('click', () => setRuntimeOpen(el.runtime.hidden));
el.closeRuntime.addEventListener('click', () => setRuntimeOpen(false));
el.toggleMemory.addEventListener('click', () => setMemoryOpen(el.memory.hidden));
el.closeMemory.addEventListener('click', () => setMemoryOpen(false));
el.memAdd.addEventListener('submit', async (e) => {
  e.preventDefault();
  const text = el.memText.value.trim();
  if (!text) return;
  const key = el.memKey.value.trim();
  try {
    const data = await api('POST', '/api/memory', { user_id: state.userId, text, ...(key ? { key } : {}) });
    el.memText.value = '';
    await loadMemory();
    if (data.status === 'duplicate') el.memStatus.textContent = `已经记得: ${data.item.text}`;
  } catch (err) {
    el.memStatus.textContent = `错误: ${err.message}`;
  }
});

takeTokenFromFragment();
el.token.value = localStorage.getItem(TOKEN_KEY) || '';
const savedUser = localStorage.getItem(USER_KEY);
state.userId = savedUser && isId(savedUser) ? savedUser : 'demo-user';
el.userId.value = state.userId;
bootstrap();
