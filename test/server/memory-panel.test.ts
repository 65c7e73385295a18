import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, watchCsp } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The chat page's long-term memory panel in headless Chromium against a real server (offline):
// it lists the current facts with their history, edits with the shown version, and forgets.

let browser: Browser;
let t: TestServer;
beforeAll(async () => {
  browser = await launchChromium();
  t = await startTestServer();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

// No flow of the page may trip its own Content-Security-Policy.
const cspViolations: string[] = [];
afterEach(() => {
  expect(cspViolations.splice(0)).toEqual([]);
});

describe('the memory panel', () => {
  it('lists current facts with their history, edits one and forgets one', async () => {
    const user = 'panel-user';
    await t.request('POST', '/api/memory', { body: { user_id: user, text: 'favorite drink is tea', key: 'drink' } });
    await t.request('POST', '/api/memory', { body: { user_id: user, text: 'favorite drink is coffee', key: 'drink' } });
    await t.request('POST', '/api/memory', { body: { user_id: user, text: 'has a cat' } });
    const context = await watchCsp(await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'zh-CN' }), cspViolations);
    await context.addInitScript(`localStorage.setItem('mnemo.user', ${JSON.stringify(user)});`);
    const page = await context.newPage();
    await page.goto(t.url);
    await page.locator('.conv').first().waitFor();
    await page.click('#toggle-memory');
    await page.locator('.mem-item').nth(1).waitFor();
    expect(await page.locator('.mem-text').allInnerTexts()).toEqual(['favorite drink is coffee', 'has a cat']);
    expect(await page.locator('.mem-history summary').allInnerTexts()).toEqual(['历史 (1)']);

    page.once('dialog', (d) => void d.accept('has two cats'));
    await page.locator('.mem-item', { hasText: 'has a cat' }).getByRole('button', { name: '编辑' }).click();
    await page.locator('.mem-text', { hasText: 'has two cats' }).waitFor();

    await page.locator('.mem-item', { hasText: 'coffee' }).getByRole('button', { name: '忘记' }).click();
    await page.locator('.mem-item', { hasText: 'coffee' }).waitFor({ state: 'detached' });
    expect(await page.locator('.mem-text').allInnerTexts()).toEqual(['has two cats']);
    const current = (await t.request('GET', `/api/memory?user_id=${user}`)).json as { items: { text: string; version: number }[] };
    expect(current.items).toEqual([expect.objectContaining({ text: 'has two cats', version: 2 })]);
    await context.close();
  });
});
