import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { launchChromium, watchCsp } from '../support/browser.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The chat page in headless Chromium against a real server and runtime. The model is a real
// OpenAI-compatible endpoint on loopback that calls a memory tool, so tool-call panels are real.
// Pages open with a Chinese browser (the Demo's page) unless a test asks for another locale.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CODE_ANSWER = 'Try this:\n\n```js\nconst answer = 42; // the answer\nconsole.log(answer);\n```';
// What the page's CSP refuses, in a model's markdown: inline styles and outside resources.
const OUTSIDE_ANSWER =
  'A <span style="color:red">red</span> word<style>p { color: red }</style> and ![a cat](https://example.invalid/cat.png), ' +
  '![the icon](/static/favicon.svg), <video src="https://example.invalid/v.mp4"></video>' +
  '<table background="https://example.invalid/b.png"><tr><td>cell</td></tr></table> <svg><image href="https://example.invalid/s.png"/></svg> done';

let launched: Browser | undefined;
let launchError: unknown;
let stub: ChatStub;
let t: TestServer;

/** The browser, or the launch error (e.g. Chromium missing), failing every test that needs it. */
function browser(): Browser {
  if (launched === undefined) throw launchError;
  return launched;
}

beforeAll(async () => {
  try {
    launched = await launchChromium();
  } catch (err) {
    launchError = err;
  }
  stub = await startChatStub({
    answer: (user, results) =>
      user.includes('markdown')
        ? 'Here is **bold** and <img src="x" onerror="window.__pwned = true"> and <script>window.__pwned = true</script>'
        : user.includes('code')
          ? CODE_ANSWER
          : user.includes('outside')
            ? OUTSIDE_ANSWER
          : `stub answer to "${user}" (${results} tool results)`,
  });
  t = await startTestServer({ llm: openAICompatible({ apiKey: 'sk-test', baseURL: stub.baseURL, model: 'stub-model', maxRetries: 0 }) });
});

afterAll(async () => {
  await launched?.close();
  await t?.close();
  await stub?.close();
});

/** Every Content-Security-Policy violation any page logged during the current test. */
const cspViolations: string[] = [];

// No flow of the page may trip its own Content-Security-Policy.
afterEach(() => {
  const seen = cspViolations.splice(0);
  expect(seen).toEqual([]);
});

/** A browser context with a Chinese browser language unless `options` say otherwise. */
async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  return watchCsp(await browser().newContext({ locale: 'zh-CN', ...options }), cspViolations);
}

/** A fresh browser context whose page starts as `user` (the page remembers its user). */
async function openPage(user: string, url = t.url, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await newContext({ viewport: { width: 1200, height: 800 }, ...options });
  await context.addInitScript(
    `if (!localStorage.getItem('mnemo.user')) localStorage.setItem('mnemo.user', ${JSON.stringify(user)});`,
  );
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('.conv').first().waitFor();
  return page;
}

/** Sends as a user does: once the page takes a turn (the previous one is over). */
async function send(page: Page, text: string): Promise<void> {
  await page.locator('#send:enabled').waitFor();
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

const assistantTexts = (page: Page) => page.locator('.msg.assistant .bubble').allInnerTexts();

describe('chat page', () => {
  it('sends a message, shows the reply with its tool-call panel, and replays both after a reload', async () => {
    const page = await openPage('demo-user');
    await send(page, 'coffee please');
    const reply = page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "coffee please" (1 tool results)' });
    await reply.waitFor();
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['coffee please']);
    expect(await page.locator('details.tool-calls summary').allInnerTexts()).toEqual(['工具调用 (1)']);

    await page.reload();
    await reply.waitFor();
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['coffee please']);
    const panel = page.locator('details.tool-calls');
    expect(await panel.count()).toBe(1);
    expect(await panel.getAttribute('open')).toBeNull(); // collapsed until asked
    await panel.locator('summary').click();
    // A structured view: the tool's name, its arguments as formatted JSON, its output.
    expect(await panel.locator('.tool-call .tool-name').allInnerTexts()).toEqual(['search_session']);
    expect(await panel.locator('.tool-call .tool-args').innerText()).toBe('{\n  "keyword": "coffee"\n}');
    expect(await panel.locator('.tool-call .tool-args .hljs-attr').innerText()).toBe('"keyword"');
    expect(await panel.locator('.tool-call .tool-output').innerText()).toMatch(/user: coffee please/);
    expect(await panel.innerText()).not.toContain('### 工具调用');

    const title = await page.locator('#conv-title').innerText();
    expect(title).not.toBe('');
    expect(await page.locator('.conv.active .conv-title').innerText()).toBe(title);
    await page.context().close();
  });

  it('edits and resends a stored message in a branch: the new conversation keeps the rows before it', async () => {
    const page = await openPage('branch-user');
    await send(page, 'first question');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "first question"' }).waitFor();
    await send(page, 'second question');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "second question"' }).waitFor();
    await page.reload();
    await page.locator('.msg.user .bubble', { hasText: 'second question' }).waitFor();
    // Both conversations carry the same title: the source is picked by its id.
    const source = await page.locator('.conv.active').getAttribute('data-session-id');
    page.once('dialog', (dialog) => void dialog.accept('second, edited'));
    await page.locator('.msg.user', { hasText: 'second question' }).locator('button.branch').click();
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "second, edited"' }).waitFor();
    // The turn is over (the list reordered) once its reply offers "regenerate".
    await page.locator('.act.regen').waitFor();
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['first question', 'second, edited']);
    expect(await page.locator('.conv').count()).toBe(2);
    await page.locator(`.conv[data-session-id="${source}"] .conv-open`).click();
    await page.locator('.msg.user .bubble', { hasText: 'second question' }).waitFor();
    await page.context().close();
  });

  it('renders assistant markdown and strips scripts and event handlers', async () => {
    const page = await openPage('markdown-user');
    await send(page, 'markdown please');
    // The finished reply (a streaming one can end inside a tag, shown as text until `done`).
    await page.locator('.msg.assistant:not(.streaming) .bubble strong', { hasText: 'bold' }).waitFor();
    const html = await page.locator('.msg.assistant:not(.streaming) .bubble').last().innerHTML();
    expect(html).not.toMatch(/onerror|<script/i);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.context().close();
  });

  it('shows a reply naming inline styles and outside images without tripping the page’s CSP: the image becomes a link', async () => {
    const page = await openPage('outside-user');
    await send(page, 'outside things');
    const reply = page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'done' });
    await reply.waitFor();
    expect(await reply.locator('span', { hasText: 'red' }).getAttribute('style')).toBeNull();
    expect(await reply.locator('a', { hasText: 'a cat' }).getAttribute('href')).toBe('https://example.invalid/cat.png');
    expect(await reply.locator('img').getAttribute('src')).toBe('/static/favicon.svg');
    expect(await reply.locator('style, video, svg, [background]').count()).toBe(0);
    await page.reload();
    await reply.waitFor();
    await page.context().close();
    // The CSP check is the afterEach: no violation was logged, live or after the reload.
  });

  it('shows user text as plain text, never as HTML', async () => {
    const page = await openPage('plain-user');
    await send(page, '<b>not bold</b>');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to' }).waitFor();
    expect(await page.locator('.msg.user .bubble b').count()).toBe(0);
    expect(await page.locator('.msg.user .bubble').last().innerText()).toBe('<b>not bold</b>');
    await page.context().close();
  });

  it('shows "错误: {detail}" when a turn fails', async () => {
    const page = await openPage('failing-user');
    await send(page, 'please #fail');
    const error = page.locator('.msg.error .bubble');
    await error.waitFor();
    expect(await error.innerText()).toBe('错误: the model provider rejected the request');
    await page.context().close();
  });

  it('shows a failed turn’s stored error after a reload, not an empty bubble', async () => {
    const page = await openPage('failing-reload-user');
    await send(page, 'again #fail');
    await page.locator('.msg.error .bubble').waitFor();
    await page.reload();
    const error = page.locator('.msg.error .bubble');
    await error.waitFor();
    expect(await error.innerText()).toMatch(/^错误: .+ \(llm_bad_request\)$/);
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['again #fail']);
    expect(await assistantTexts(page)).toEqual([]);
    await page.context().close();
  });

  it('keeps users apart: switching the user shows only that user’s conversations', async () => {
    const page = await openPage('first-user');
    await send(page, 'first user talking');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'first user talking' }).waitFor();

    await page.fill('#user-id', 'second-user');
    await page.press('#user-id', 'Enter');
    await page.locator('.empty').waitFor();
    expect(await page.locator('.conv').count()).toBe(1); // the bootstrap's fresh conversation
    expect(await page.locator('.msg').count()).toBe(0);

    await page.fill('#user-id', 'first-user');
    await page.press('#user-id', 'Enter');
    await page.locator('.msg.user .bubble', { hasText: 'first user talking' }).waitFor();
    await page.context().close();
  });

  it('deletes a conversation after confirmation, and it stays gone after a reload', async () => {
    const page = await openPage('deleting-user');
    await send(page, 'short lived');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'short lived' }).waitFor();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.locator('.conv.active .conv-delete').click();
    await page.locator('.empty').waitFor(); // the bootstrap opened a fresh conversation
    await page.reload();
    await page.locator('.conv').first().waitFor();
    expect(await page.locator('.conv-title').allInnerTexts()).toEqual(['新对话']);
    const listed = await t.request('GET', '/api/conversations?user_id=deleting-user');
    expect(listed.json).toEqual({ items: [] });
    await page.context().close();
  });

  it('shows the live supervision tree with restart counts', async () => {
    const page = await openPage('runtime-user');
    await page.click('#toggle-runtime');
    await page.locator('.runtime-tree .node').first().waitFor();
    expect(await page.locator('.runtime-tree .node').count()).toBeGreaterThan(1);
    expect(await page.locator('.runtime-tree').innerText()).toMatch(/重启 \d+/);
    await page.context().close();
  });
});

describe('chat page: earlier in this session', () => {
  it('shows the session’s latest rolling summary above its rows, collapsed, in the page’s language', async () => {
    const user = 'summary-user';
    for (let i = 1; i <= 12; i++) {
      await t.recall.chat({ userId: user, sessionId: 'long', message: `turn ${i}: ${'words about a long trip to Lisbon and its trams '.repeat(4)}` });
    }
    await t.recall.summaryIdle();
    const latest = (await t.recall.summaries(user, 'long')).at(-1)!;
    expect(latest).toBeDefined();
    const page = await openPage(user);
    const panel = page.locator('#messages > details.session-summary');
    await panel.waitFor();
    expect(await page.locator('#messages > *').first().getAttribute('class')).toBe('session-summary');
    expect(await panel.locator('summary').innerText()).toBe('本次对话的早前内容');
    expect(await panel.getAttribute('open')).toBeNull();
    await panel.locator('summary').click();
    expect(await panel.locator('.session-summary-text').textContent()).toBe(latest.text);
    expect(await panel.locator('.session-summary-meta').innerText()).toContain(`第 1–${latest.to} 条消息的摘要`);
    // The rows are all still there below it.
    expect(await page.locator('.msg.user').count()).toBe(12);
    // In English, and a session without one shows none.
    await page.selectOption('#lang', 'en');
    await page.locator('#messages > details.session-summary summary', { hasText: 'Earlier in this session' }).waitFor();
    await page.click('#new-conv');
    await send(page, 'a short one');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "a short one"' }).waitFor();
    expect(await page.locator('details.session-summary').count()).toBe(0);
    await page.context().close();
  });
});

describe('chat page: copying, code, stop and regenerate', () => {
  it('copies a message and a code block, and highlights the code', async () => {
    const page = await openPage('code-user');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    await send(page, 'code please');
    const block = page.locator('.msg.assistant .code-block');
    await block.waitFor();
    expect(await block.locator('.code-lang').innerText()).toBe('js');
    expect(await block.locator('code.hljs .hljs-keyword').first().innerText()).toBe('const');
    expect(await block.locator('code .hljs-comment').innerText()).toBe('// the answer');

    await block.locator('button.copy').click();
    await block.locator('button.copy', { hasText: '已复制' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('const answer = 42; // the answer\nconsole.log(answer);\n');

    await page.locator('.msg.user .msg-actions button.copy').click();
    await page.locator('.msg.user button.copy', { hasText: '已复制' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('code please');

    await page.locator('.msg.assistant .msg-actions button.copy').click();
    await page.locator('.msg.assistant .msg-actions button.copy', { hasText: '已复制' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(CODE_ANSWER);
    await page.context().close();
  });

  it('stops a running turn with the stop button, and the page takes new turns after it', async () => {
    const page = await openPage('stop-user');
    expect(await page.locator('#stop').isHidden()).toBe(true);
    stub.hold();
    try {
      await send(page, 'never answered');
      await page.locator('#stop').waitFor();
      expect(await page.locator('#send').isDisabled()).toBe(true);
      await page.click('#stop');
      await page.locator('.msg.notice .bubble', { hasText: '已停止' }).waitFor();
      expect(await page.locator('.msg.pending').count()).toBe(0);
      expect(await page.locator('#stop').isHidden()).toBe(true);
    } finally {
      stub.release();
    }
    await send(page, 'answered now');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'stub answer to "answered now"' }).waitFor();
    await page.context().close();
  });

  it('regenerates: sends the last user message again as a new turn', async () => {
    const page = await openPage('regen-user');
    await send(page, 'say it twice');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'say it twice' }).waitFor();
    await page.locator('.act.regen').waitFor(); // drawn once the turn is over
    expect(await page.locator('.act.regen').count()).toBe(1);
    await page.locator('.msg.assistant .act.regen').click();
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'say it twice' }).nth(1).waitFor();
    await page.locator('.act.regen').waitFor();
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['say it twice', 'say it twice']);
    // Only the last reply offers it.
    expect(await page.locator('.act.regen').count()).toBe(1);
    expect(await page.locator('.msg.assistant').last().locator('.act.regen').count()).toBe(1);
    await page.context().close();
  });
});

describe('chat page: the tool-call timeline and the daily view', () => {
  it('lists the user’s tool calls across sessions, filters them, and opens a call’s turn scrolled to it', async () => {
    const page = await openPage('timeline-user');
    await send(page, 'apples first');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'apples first' }).waitFor();
    const firstSession = await page.locator('.conv.active').getAttribute('data-session-id');
    await page.click('#new-conv');
    await send(page, 'bananas second');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'bananas second' }).waitFor();

    await page.click('#toggle-tools');
    const items = page.locator('#timeline .tl-item');
    await items.nth(1).waitFor();
    // (Both turns may fall in one second, so their order is the route's test, not this one.)
    expect((await page.locator('#timeline .tl-said').allInnerTexts()).sort()).toEqual(['apples first', 'bananas second']);
    expect(await page.locator('#timeline .tl-name').allInnerTexts()).toEqual(['search_session', 'search_session']);
    expect(await page.locator('#tools-name option').allInnerTexts()).toEqual(['全部工具', 'search_session']);

    await page.fill('#tools-keyword', 'APPLES');
    await page.locator('#timeline .tl-item').nth(1).waitFor({ state: 'detached' });
    expect(await page.locator('#timeline .tl-said').allInnerTexts()).toEqual(['apples first']);

    await items.first().click();
    const flashed = page.locator('.msg.flash');
    await flashed.waitFor();
    expect(await page.locator('.conv.active').getAttribute('data-session-id')).toBe(firstSession);
    expect(await flashed.locator('.bubble').innerText()).toContain('apples first');
    expect(await flashed.locator('details.tool-calls').getAttribute('open')).not.toBeNull();
    expect(await flashed.isVisible()).toBe(true);
    await page.context().close();
  });

  it('shows the daily view by day and opens a row in its session', async () => {
    const page = await openPage('daily-user');
    await send(page, 'diary entry');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: 'diary entry' }).waitFor();
    await page.click('#new-conv');
    await page.click('#toggle-daily');
    const rows = page.locator('#daily-list .daily-row');
    await rows.nth(1).waitFor();
    expect(await page.locator('#daily-list .daily-text').allInnerTexts()).toEqual([
      'diary entry',
      'stub answer to "diary entry" (1 tool results)',
    ]);
    expect(await page.locator('#daily-list .daily-role').allInnerTexts()).toEqual(['用户', '助手']);

    // The tabs move with the arrow keys.
    await page.focus('#tab-daily');
    await page.keyboard.press('ArrowRight');
    await page.locator('#panel-memory').waitFor();
    expect(await page.locator('#tab-memory').getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#panel-daily').isHidden()).toBe(true);
    await page.keyboard.press('ArrowLeft');
    await page.locator('#panel-daily').waitFor();

    await page.click('#daily-prev');
    await page.locator('#daily-status', { hasText: '这一天没有消息' }).waitFor();
    await page.click('#daily-next');
    await rows.nth(1).waitFor();

    await rows.first().locator('.daily-open').click();
    const flashed = page.locator('.msg.user.flash');
    await flashed.waitFor();
    expect(await flashed.locator('.bubble').innerText()).toBe('diary entry');
    await page.context().close();
  });
});

describe('chat page languages', () => {
  it('speaks English to an English browser, switches to Chinese, and remembers the choice', async () => {
    const page = await openPage('english-user', t.url, { locale: 'en-US' });
    expect(await page.locator('#send').innerText()).toBe('Send');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('#input').getAttribute('placeholder')).toBe('Type a message, Enter to send');
    await send(page, 'hello english');
    await page.locator('details.tool-calls summary', { hasText: 'Tool calls (1)' }).waitFor();
    // The list catches up with the turn after its reply is drawn.
    await expect.poll(() => page.locator('.conv-title').allInnerTexts()).not.toContain('新对话');

    await page.selectOption('#lang', 'zh');
    await page.locator('#send', { hasText: '发送' }).waitFor();
    await page.locator('details.tool-calls summary', { hasText: '工具调用 (1)' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await page.reload();
    await page.locator('details.tool-calls summary', { hasText: '工具调用 (1)' }).waitFor();
    expect(await page.locator('#send').innerText()).toBe('发送');
    expect(await page.locator('#lang').inputValue()).toBe('zh');
    await page.context().close();
  });

  it('shows errors in English to an English browser', async () => {
    const page = await openPage('english-fail-user', t.url, { locale: 'en-GB' });
    await send(page, 'oops #fail');
    const error = page.locator('.msg.error .bubble');
    await error.waitFor();
    expect(await error.innerText()).toBe('Error: the model provider rejected the request');
    await page.context().close();
  });
});

describe('chat page accessibility (axe-core)', () => {
  const layouts = [
    { name: 'desktop', viewport: { width: 1280, height: 860 } },
    { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  ] as const;
  for (const layout of layouts) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`has no serious or critical violations at ${layout.name} width in ${colorScheme} mode`, async () => {
        const { name: _name, ...device } = layout;
        const page = await openPage(`axe-${layout.name}-${colorScheme}`, t.url, { ...device, colorScheme });
        await send(page, 'code please');
        await page.locator('.msg.assistant .code-block').waitFor();
        await page.locator('details.tool-calls summary').first().click();
        if (layout.name === 'desktop') {
          await page.click('#toggle-tools');
          await page.locator('#timeline .tl-item').first().waitFor();
        }
        const violations = await axeViolations(page);
        expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

        // The other panels and the sidebar, opened, too.
        if (layout.name === 'phone') await page.click('#toggle-sidebar');
        else {
          await page.click('#tab-daily');
          await page.locator('#daily-list .daily-row').first().waitFor();
        }
        const more = await axeViolations(page);
        expect(more.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
        await page.context().close();
      });
    }
  }
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core run in the page (evaluated over CDP, so the page's CSP need not allow it). */
async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, so it is not type-checked against Node's globals: it runs in the page.
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target) + ' ' + (n.failureSummary || '')) })))`);
}

describe('chat page with a bearer token', () => {
  let guarded: TestServer;
  beforeAll(async () => {
    guarded = await startTestServer({ token: 'page-token' });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  it('asks for the token on 401 and works once it is saved', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(guarded.url);
    await page.locator('.msg.error .bubble', { hasText: '错误: missing bearer token' }).waitFor();
    expect(await page.locator('#token-box').getAttribute('open')).not.toBeNull();
    await page.fill('#token', 'page-token');
    await page.press('#token', 'Enter');
    await page.locator('.conv').first().waitFor();
    await send(page, 'hello with token');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: '收到：hello with token。' }).waitFor();
    await context.close();
  });

  it('takes the token from the #token= fragment and removes it from the address bar', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${guarded.url}/#token=page-token`);
    await page.locator('.conv').first().waitFor();
    expect(page.url()).toBe(`${guarded.url}/`);
    await context.close();
  });

  it('asks before a #token= link replaces the saved token, and keeps it when told no', async () => {
    const context = await newContext();
    const dialogs: string[] = [];
    /** Opens `hash` in a fresh page of the context, answering its confirm with `accept`; the saved token after. */
    const open = async (hash: string, accept: boolean): Promise<string | null> => {
      const page = await context.newPage();
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      });
      await page.goto(`${guarded.url}/${hash}`);
      await page.locator('#user-id').waitFor();
      expect(page.url()).toBe(`${guarded.url}/`);
      const saved = await page.evaluate(`localStorage.getItem('mnemo.token')`);
      await page.close();
      return saved as string | null;
    };
    expect(await open('#token=page-token', false)).toBe('page-token'); // nothing saved yet: no question
    expect(await open('#token=page-token', false)).toBe('page-token'); // the same one: no question
    expect(dialogs).toEqual([]);
    expect(await open('#token=someone-elses', false)).toBe('page-token');
    expect(dialogs).toEqual([expect.stringContaining('另一个访问令牌')]);
    expect(await open('#token=someone-elses', true)).toBe('someone-elses');
    expect(dialogs).toHaveLength(2);
    await context.close();
  });
});

describe('chat page with a user token', () => {
  let guarded: TestServer;
  beforeAll(async () => {
    guarded = await startTestServer({ userTokens: { 'page-user-token-0123': 'token-user' } });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  it('takes the token’s user from /api/whoami, locks the user switch and hides the operator’s runtime panel', async () => {
    const context = await watchCsp(await browser().newContext(), cspViolations);
    const page = await context.newPage();
    await page.goto(`${guarded.url}/#token=page-user-token-0123`);
    await page.locator('.conv').first().waitFor();
    expect(await page.inputValue('#user-id')).toBe('token-user');
    expect(await page.locator('#user-id').getAttribute('readonly')).not.toBeNull();
    expect(await page.locator('#toggle-runtime').isHidden()).toBe(true);
    expect(await page.locator('#tab-runtime').isHidden()).toBe(true);
    await send(page, 'hello as token-user');
    await page.locator('.msg.assistant:not(.streaming) .bubble', { hasText: '收到：hello as token-user。' }).waitFor();
    const listed = await guarded.request('GET', '/api/conversations?user_id=token-user', {
      headers: { authorization: 'Bearer page-user-token-0123' },
    });
    expect((listed.json as { items: unknown[] }).items).toHaveLength(1);
    await context.close();
  });
});

describe('chat page when the server is gone', () => {
  it('shows "网络错误: ..." when a request cannot reach the server', async () => {
    const gone = await startTestServer();
    const page = await openPage('lonely-user', gone.url);
    await gone.close();
    await send(page, 'anyone there?');
    const error = page.locator('.msg.error .bubble');
    await error.waitFor();
    expect(await error.innerText()).toMatch(/^网络错误: /);
    await page.context().close();
  });
});

describe('chat page streaming', () => {
  it('shows the reply as it is written, before the model has finished', async () => {
    const slow = await startChatStub({ toolCall: () => null, answer: () => 'streamed **words** arrive one by one', stallAfter: 2 });
    const server = await startTestServer({
      llm: openAICompatible({ apiKey: 'sk-test', baseURL: slow.baseURL, model: 'stub-model', maxRetries: 0 }),
    });
    try {
      const page = await openPage('streaming-user', server.url);
      await send(page, 'talk slowly');
      // The model has sent two words and is still "writing": they are on the page already.
      await page.locator('.msg.assistant .bubble strong', { hasText: 'words' }).waitFor();
      expect(await page.locator('.msg.assistant .bubble').last().innerText()).toBe('streamed words');
      expect(await page.locator('.msg.assistant.pending').count()).toBe(0);
      await page.context().close();
      await slow.waitForAbort(1); // closing the page drops the stream, and with it the model call
    } finally {
      await server.close();
      await slow.close();
    }
  });
});
