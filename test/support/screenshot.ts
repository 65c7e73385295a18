/**
 * Makes docs/screenshot.png: the chat page in headless Chromium with a short conversation.
 *
 *   npx tsx test/support/screenshot.ts [out.png] [WIDTHxHEIGHT] [light|dark]
 *
 * The server, runtime, memory tools and page are the real ones; the model is a scripted
 * OpenAI-compatible endpoint on loopback (so the picture needs no API key and is the same
 * every time). The tool calls shown are real calls of the memory tools, with their real output.
 */
import { fileURLToPath } from 'node:url';
import { openAICompatible } from '../../src/llm/index.ts';
import { launchChromium } from './browser.ts';
import { startChatStub } from './chat-completions-stub.ts';
import { startTestServer } from './test-server.ts';

const out = process.argv[2] ?? fileURLToPath(new URL('../../docs/screenshot.png', import.meta.url));
const [width, height] = (process.argv[3] ?? '1440x900').split('x').map(Number) as [number, number];
const narrow = width < 760;
const colorScheme = process.argv[4] === 'dark' ? 'dark' : 'light';

const script: { match: RegExp; tool: { name: string; arguments: Record<string, unknown> } | null; answer: string; title: string }[] = [
  {
    match: /香山/,
    tool: null,
    answer: '好的！建议早上 7 点从东宫门出发，走 **香炉峰** 主路线，全程约 2.5 小时。记得带水和防风外套。',
    title: '周末香山徒步',
  },
  {
    match: /所有权/,
    tool: null,
    answer: 'Rust 的所有权有三条规则：\n\n1. 每个值都有一个 **所有者**；\n2. 同一时刻只有一个所有者；\n3. 所有者离开作用域，值就被释放。',
    title: 'Rust 所有权笔记',
  },
  {
    match: /手冲咖啡/,
    tool: { name: 'remember_note', arguments: { note: '- 名字：小林\n- 喜欢手冲咖啡，不加糖' } },
    answer: '好的，小林！我已经记下了：\n\n- 喜欢 **手冲咖啡**\n- **不加糖**\n\n以后推荐饮品时会参考这些偏好。',
    title: '咖啡口味偏好',
  },
  {
    match: /什么咖啡/,
    tool: { name: 'search_session', arguments: { keyword: '咖啡' } },
    answer:
      '你之前说过喜欢 **手冲咖啡**，而且习惯 **不加糖**（见第 1 条消息）。\n\n' +
      '要不要试试埃塞俄比亚的 *耶加雪菲*？它的花香和柑橘酸质很适合手冲。',
    title: '咖啡口味偏好',
  },
];
const find = (text: string) => script.find((s) => s.match.test(text));

const stub = await startChatStub({
  toolCall: (text) => find(text)?.tool ?? null,
  answer: (text) => find(text)?.answer ?? '好的。',
  title: (text) => find(text)?.title ?? '新对话',
});
const t = await startTestServer({
  name: 'mnemo',
  llm: openAICompatible({ apiKey: 'sk-screenshot', baseURL: stub.baseURL, model: 'scripted', maxRetries: 0 }),
});
const browser = await launchChromium();
try {
  // Two older conversations for the sidebar, through the API.
  for (const [session_id, message] of [
    ['hike', '帮我规划一下周末去香山徒步'],
    ['rust', '用三句话讲讲 Rust 的所有权'],
  ] as const) {
    await t.request('POST', '/api/chat', { body: { user_id: 'demo-user', session_id, message } });
  }

  // A Chinese browser: the Demo's page, in its own language.
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1, locale: 'zh-CN', colorScheme });
  const page = await context.newPage();
  await page.goto(t.url);
  await page.locator('.conv').first().waitFor();
  if (narrow) await page.click('#toggle-sidebar');
  await page.click('#new-conv');
  for (const text of ['我叫小林，平时喜欢喝手冲咖啡，不加糖。', '我之前说过喜欢什么咖啡来着？']) {
    const before = await page.locator('.msg.assistant:not(.pending)').count();
    await page.fill('#input', text);
    await page.press('#input', 'Enter');
    await page.locator('.msg.assistant:not(.pending)').nth(before).waitFor();
  }
  await page.locator('details.tool-calls summary').last().click();
  if (!narrow) {
    await page.click('#toggle-tools');
    await page.locator('#timeline .tl-item').nth(1).waitFor();
  }
  await page.locator('#input').blur();
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await t.close();
  await stub.close();
}
