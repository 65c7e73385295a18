// The chat page's words in Chinese (the Demo's) and English. `t(key, vars)` looks a key up in
// the current language ({name} placeholders filled from vars); `applyI18n(root)` relabels the
// elements that carry data-i18n (text), data-i18n-html (trusted markup from this table only),
// data-i18n-title, data-i18n-placeholder and data-i18n-aria-label. The language is the saved
// choice (localStorage `mnemo.lang`), else the browser's: zh for any zh-*, else en.
// This is the page's language only; the server's prompts follow its own `--language`.

const STRINGS = {
  zh: {
    htmlLang: 'zh-CN',
    pageTitle: 'Mnemo · 记忆对话',
    tagline: '持久的对话记忆',
    sidebar: '对话',
    userId: '用户 ID',
    switchUser: '切换',
    switchUserTitle: '切换用户',
    invalidUser: '用户 ID：1-128 个字符，不含控制字符，首尾不能是空格',
    newConversation: '+ 新建对话',
    conversationList: '对话列表',
    untitled: '新对话',
    deleteConversation: '删除对话',
    deleteConversationNamed: '删除对话 {title}',
    confirmDelete: '删除对话「{title}」？此操作不可撤销。',
    confirmReplaceToken: '这个链接带有另一个访问令牌。用它替换本浏览器保存的令牌吗？（取消则保留原来的令牌。）',
    language: '界面语言',
    token: '访问令牌',
    tokenHint: '服务器用 <code>--token</code> 启动时，在这里填入同一个令牌。它只保存在本浏览器里。',
    save: '保存',
    messages: '消息',
    message: '消息',
    inputPlaceholder: '输入消息，Enter 发送',
    inputTitle: 'Enter 发送，Shift+Enter 换行',
    send: '发送',
    stop: '停止',
    stopped: '已停止：这一轮没有等到回复。',
    emptyTitle: '开始一段对话',
    emptyBody: '消息会持久保存：重启服务器后依然在这里。',
    error: '错误: {detail}',
    networkError: '网络错误: {detail}',
    copy: '复制',
    copied: '已复制',
    copyFailed: '复制失败',
    copyMessage: '复制消息',
    copyCode: '复制代码',
    regenerate: '重新生成',
    regenerateTitle: '重新发送上一条消息',
    branch: '编辑并重发',
    branchTitle: '从这里分支：编辑这条消息，在新的对话里重新发送',
    branchPrompt: '编辑消息后重新发送（在新的分支对话中）',
    streamEnded: '回复流提前结束了',
    search: '搜索全部记忆',
    searchPlaceholder: '搜索全部记忆…',
    searchHits: '搜索结果',
    noHits: '没有找到',
    longTerm: '长期记忆',
    memoryTitle: '长期记忆',
    memNewFact: '新的事实',
    memKey: '键',
    memKeyPlaceholder: '键（可选，如 favorite_drink）',
    memRemember: '记住',
    memEmpty: '还没有长期记忆',
    memCount: '{count} 条',
    memKeyShown: '键 {key}',
    memEdit: '编辑',
    memForget: '忘记',
    memHistory: '历史 ({count})',
    memUntil: '{text} (v{version}, 至 {time})',
    memEditPrompt: '新的内容',
    memConflict: '它已被别处修改，已刷新',
    memDuplicate: '已经记得: {text}',
    userLocked: '此令牌只属于这个用户',
    toolCalls: '工具调用 ({count})',
    toolArguments: '参数',
    toolOutput: '输出',
    toolNoOutput: '（无输出）',
    inspector: '面板',
    close: '关闭',
    tabTools: '工具调用',
    tabDaily: '每日',
    tabMemory: '记忆',
    tabRuntime: '运行时',
    toolName: '工具',
    allTools: '全部工具',
    keyword: '关键词',
    loading: '加载中…',
    noToolCalls: '还没有工具调用。',
    toolCallsCount: '{count} 次工具调用',
    failedTurn: '失败的一轮',
    openTurn: '打开这一轮：{title}',
    day: '日期',
    prevDay: '前一天',
    nextDay: '后一天',
    noDailyRows: '这一天没有消息。',
    dailyCount: '{day} · {count} 条消息',
    roleUser: '用户',
    roleAssistant: '助手',
    openInSession: '在对话中打开',
    supervisionTree: '监督树',
    live: '实时 · {time}',
    restarts: '重启 {n}',
    mailbox: '邮箱 {n}',
    earlierInSession: '本次对话的早前内容',
    summaryCovers: '第 1–{to} 条消息的摘要（{method}），模型会收到它',
    summaryByModel: '模型所写',
    summaryExtractive: '摘录',
  },
  en: {
    htmlLang: 'en',
    pageTitle: 'Mnemo · memory chat',
    tagline: 'durable conversation memory',
    sidebar: 'Conversations',
    userId: 'User ID',
    switchUser: 'Switch',
    switchUserTitle: 'Switch user',
    invalidUser: 'User ID: 1-128 characters, no control characters, no leading or trailing space',
    newConversation: '+ New chat',
    conversationList: 'Conversations',
    untitled: 'New chat',
    deleteConversation: 'Delete conversation',
    deleteConversationNamed: 'Delete conversation {title}',
    confirmDelete: 'Delete the conversation “{title}”? This cannot be undone.',
    confirmReplaceToken: 'This link carries another access token. Replace the token this browser has saved with it? (Cancel keeps the saved one.)',
    language: 'Language',
    token: 'Access token',
    tokenHint: 'When the server was started with <code>--token</code>, enter the same token here. It is kept in this browser only.',
    save: 'Save',
    messages: 'Messages',
    message: 'Message',
    inputPlaceholder: 'Type a message, Enter to send',
    inputTitle: 'Enter sends, Shift+Enter starts a new line',
    send: 'Send',
    stop: 'Stop',
    stopped: 'Stopped: this turn’s reply was not awaited.',
    emptyTitle: 'Start a conversation',
    emptyBody: 'Messages are durable: they are still here after the server restarts.',
    error: 'Error: {detail}',
    networkError: 'Network error: {detail}',
    copy: 'Copy',
    copied: 'Copied',
    copyFailed: 'Copy failed',
    copyMessage: 'Copy message',
    copyCode: 'Copy code',
    regenerate: 'Regenerate',
    regenerateTitle: 'Send the last message again',
    branch: 'Edit and resend',
    branchTitle: 'Branch from here: edit this message and resend it in a new conversation',
    branchPrompt: 'Edit the message to resend it (in a new branched conversation)',
    streamEnded: 'the reply stream ended early',
    search: 'Search all memory',
    searchPlaceholder: 'Search all memory…',
    searchHits: 'Search results',
    noHits: 'Nothing found',
    longTerm: 'long-term memory',
    memoryTitle: 'Long-term memory',
    memNewFact: 'New fact',
    memKey: 'Key',
    memKeyPlaceholder: 'Key (optional, e.g. favorite_drink)',
    memRemember: 'Remember',
    memEmpty: 'No long-term memory yet',
    memCount: '{count} entries',
    memKeyShown: 'key {key}',
    memEdit: 'Edit',
    memForget: 'Forget',
    memHistory: 'History ({count})',
    memUntil: '{text} (v{version}, until {time})',
    memEditPrompt: 'New text',
    memConflict: 'It was changed elsewhere first; refreshed',
    memDuplicate: 'Already remembered: {text}',
    userLocked: 'This token belongs to this user only',
    toolCalls: 'Tool calls ({count})',
    toolArguments: 'Arguments',
    toolOutput: 'Output',
    toolNoOutput: '(no output)',
    inspector: 'Panels',
    close: 'Close',
    tabTools: 'Tool calls',
    tabDaily: 'Daily',
    tabMemory: 'Memory',
    tabRuntime: 'Runtime',
    toolName: 'Tool',
    allTools: 'All tools',
    keyword: 'Keyword',
    loading: 'Loading…',
    noToolCalls: 'No tool calls yet.',
    toolCallsCount: '{count} tool calls',
    failedTurn: 'failed turn',
    openTurn: 'Open this turn: {title}',
    day: 'Day',
    prevDay: 'Previous day',
    nextDay: 'Next day',
    noDailyRows: 'No messages on this day.',
    dailyCount: '{day} · {count} messages',
    roleUser: 'User',
    roleAssistant: 'Assistant',
    openInSession: 'Open in its conversation',
    supervisionTree: 'Supervision tree',
    live: 'Live · {time}',
    restarts: 'restarts {n}',
    mailbox: 'mailbox {n}',
    earlierInSession: 'Earlier in this session',
    summaryCovers: 'A summary of messages 1–{to} ({method}); the model is sent it',
    summaryByModel: 'written by the model',
    summaryExtractive: 'extracts',
  },
};

export const LANGS = Object.keys(STRINGS);
const LANG_KEY = 'mnemo.lang';

/** The saved choice, else zh for a zh* browser, else en. */
export function initialLang() {
  const saved = localStorage.getItem(LANG_KEY);
  if (saved && LANGS.includes(saved)) return saved;
  const preferred = navigator.languages && navigator.languages.length ? navigator.languages[0] : navigator.language;
  return /^zh\b/i.test(preferred || '') ? 'zh' : 'en';
}

let current = 'zh';

export function currentLang() {
  return current;
}

export function setLang(lang, { save = true } = {}) {
  current = LANGS.includes(lang) ? lang : 'en';
  if (save) localStorage.setItem(LANG_KEY, current);
  document.documentElement.lang = t('htmlLang');
  document.title = t('pageTitle');
  applyI18n(document);
}

export function t(key, vars = {}) {
  const text = STRINGS[current][key] ?? STRINGS.zh[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (vars[name] === undefined ? m : String(vars[name])));
}

export function applyI18n(root) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll('[data-i18n-html]')) node.innerHTML = t(node.dataset.i18nHtml);
  for (const node of root.querySelectorAll('[data-i18n-title]')) node.title = t(node.dataset.i18nTitle);
  for (const node of root.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const node of root.querySelectorAll('[data-i18n-aria-label]')) node.setAttribute('aria-label', t(node.dataset.i18nAriaLabel));
}
