import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { launchChromium } from '../support/browser.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The chat page in headless Chromium against a real server and runtime. The model is a real
// OpenAI-compatible endpoint on loopback that calls a memory tool, so tool-call panels are real.

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
        : `stub answer to "${user}" (${results} tool results)`,
  });
  t = await startTestServer({ llm: openAICompatible({ apiKey: 'sk-test', baseURL: stub.baseURL, model: 'stub-model', maxRetries: 0 }) });
});

afterAll(async () => {
  await launched?.close();
  await t?.close();
  await stub?.close();
});

/** A fresh browser context whose page starts as `user` (the page remembers its user). */
async function openPage(user: string, url = t.url): Promise<Page> {
  const context = await browser().newContext({ viewport: { width: 1200, height: 800 } });
  await context.addInitScript(
    `if (!localStorage.getItem('mnemo.user')) localStorage.setItem('mnemo.user', ${JSON.stringify(user)});`,
  );
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('.conv').first().waitFor();
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

const assistantTexts = (page: Page) => page.locator('.msg.assistant .bubble').allInnerTexts();

describe('chat page', () => {
  it('sends a message, shows the reply with its tool-call panel, and replays both after a reload', async () => {
    const page = await openPage('demo-user');
    await send(page, 'coffee please');
    const reply = page.locator('.msg.assistant .bubble', { hasText: 'stub answer to "coffee please" (1 tool results)' });
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
    const body = await panel.locator('pre').innerText();
    expect(body).toMatch(/^### 工具调用\n1\. search_session\n- 输入: \{"keyword": "coffee"\}\n- 输出: /);

    const title = await page.locator('#conv-title').innerText();
    expect(title).not.toBe('');
    expect(await page.locator('.conv.active .conv-title').innerText()).toBe(title);
    await page.context().close();
  });

  it('edits and resends a stored message in a branch: the new conversation keeps the rows before it', async () => {
    const page = await openPage('branch-user');
    await send(page, 'first question');
    await page.locator('.msg.assistant .bubble', { hasText: 'stub answer to "first question"' }).waitFor();
    await send(page, 'second question');
    await page.locator('.msg.assistant .bubble', { hasText: 'stub answer to "second question"' }).waitFor();
    await page.reload();
    await page.locator('.msg.user .bubble', { hasText: 'second question' }).waitFor();
    const source = await page.locator('.conv.active').innerText();
    page.once('dialog', (dialog) => void dialog.accept('second, edited'));
    await page.locator('.msg.user', { hasText: 'second question' }).locator('button.branch').click();
    await page.locator('.msg.assistant .bubble', { hasText: 'stub answer to "second, edited"' }).waitFor();
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual(['first question', 'second, edited']);
    expect(await page.locator('.conv').count()).toBe(2);
    await page.locator('.conv', { hasText: source.split('\n')[0] }).last().click();
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

  it('shows user text as plain text, never as HTML', async () => {
    const page = await openPage('plain-user');
    await send(page, '<b>not bold</b>');
    await page.locator('.msg.assistant .bubble', { hasText: 'stub answer to' }).waitFor();
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
    await page.locator('.msg.assistant .bubble', { hasText: 'first user talking' }).waitFor();

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
    await page.locator('.msg.assistant .bubble', { hasText: 'short lived' }).waitFor();
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

describe('chat page with a bearer token', () => {
  let guarded: TestServer;
  beforeAll(async () => {
    guarded = await startTestServer({ token: 'page-token' });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  it('asks for the token on 401 and works once it is saved', async () => {
    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(guarded.url);
    await page.locator('.msg.error .bubble', { hasText: '错误: missing bearer token' }).waitFor();
    expect(await page.locator('#token-box').getAttribute('open')).not.toBeNull();
    await page.fill('#token', 'page-token');
    await page.press('#token', 'Enter');
    await page.locator('.conv').first().waitFor();
    await send(page, 'hello with token');
    await page.locator('.msg.assistant .bubble', { hasText: '收到：hello with token。' }).waitFor();
    await context.close();
  });

  it('takes the token from the #token= fragment and removes it from the address bar', async () => {
    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(`${guarded.url}/#token=page-token`);
    await page.locator('.conv').first().waitFor();
    expect(page.url()).toBe(`${guarded.url}/`);
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

  it('takes the token’s user from /api/whoami and locks the user switch', async () => {
    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(`${guarded.url}/#token=page-user-token-0123`);
    await page.locator('.conv').first().waitFor();
    expect(await page.inputValue('#user-id')).toBe('token-user');
    expect(await page.locator('#user-id').getAttribute('readonly')).not.toBeNull();
    await send(page, 'hello as token-user');
    await page.locator('.msg.assistant .bubble', { hasText: '收到：hello as token-user。' }).waitFor();
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
