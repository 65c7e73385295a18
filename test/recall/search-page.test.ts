import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, watchCsp } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The page's search box in headless Chromium against a real server and runtime (offline LLM):
// a hit opens its session with the message in view and marked.

let launched: Browser | undefined;
let launchError: unknown;
let t: TestServer;

beforeAll(async () => {
  try {
    launched = await launchChromium();
  } catch (err) {
    launchError = err;
  }
  t = await startTestServer();
  const chat = (session_id: string, message: string) =>
    t.request('POST', '/api/chat', { body: { user_id: 'page-u', session_id, message } });
  await chat('older', 'the spare key is under the blue flowerpot');
  for (let i = 0; i < 30; i++) await chat('older', `filler message number ${i}`);
  await chat('newer', 'hello again');
});

afterAll(async () => {
  await launched?.close();
  await t?.close();
});

// No flow of the page may trip its own Content-Security-Policy.
const cspViolations: string[] = [];
afterEach(() => {
  expect(cspViolations.splice(0)).toEqual([]);
});

describe('the search box', () => {
  it('lists ranked hits, and a hit opens its session scrolled to the message', async () => {
    if (launched === undefined) throw launchError;
    const context = await watchCsp(await launched.newContext({ viewport: { width: 1200, height: 800 }, locale: 'zh-CN' }), cspViolations);
    await context.addInitScript(`localStorage.setItem('mnemo.user', 'page-u');`);
    const page = await context.newPage();
    await page.goto(t.url);
    await page.locator('.conv').first().waitFor();
    await page.fill('#search-q', 'where is the spare key?');
    await page.press('#search-q', 'Enter');
    const hit = page.locator('.search-hit', { hasText: 'the spare key is under the blue flowerpot' }).first();
    await hit.waitFor();
    await hit.click();
    const marked = page.locator('.msg.flash .bubble', { hasText: 'the spare key is under the blue flowerpot' });
    await marked.waitFor();
    expect(await page.locator('.conv.active').getAttribute('data-session-id')).toBe('older');
    expect(await marked.isVisible()).toBe(true);
    const inView = await marked.evaluate((node) => {
      const r = node.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
    });
    expect(inView).toBe(true);
    await context.close();
  });
});
