import { openAICompatible } from '../../src/llm/index.ts';
import { launchChromium } from './browser.ts';
import { startChatStub } from './chat-completions-stub.ts';
import { startTestServer } from './test-server.ts';
const stub = await startChatStub({ answer: (u) => u.includes('code') ? 'Here:\n\n```python\ndef f(x):\n    return x * 2  # double\n```' : `answer to ${u}` });
const t = await startTestServer({ llm: openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm', maxRetries: 0 }) });
const b = await launchChromium();
try {
  for (const [w, h, scheme, panel] of [[1280, 800, 'light', 'daily'], [390, 844, 'light', 'tools'], [390, 844, 'dark', 'sidebar']] as const) {
    const ctx = await b.newContext({ viewport: { width: w, height: h }, locale: 'en-US', colorScheme: scheme });
    const page = await ctx.newPage();
    await page.goto(t.url);
    await page.locator('.conv').first().waitFor();
    for (const text of ['hello there', 'code please']) {
      const n = await page.locator('.msg.assistant:not(.pending)').count();
      await page.fill('#input', text); await page.press('#input', 'Enter');
      await page.locator('.msg.assistant:not(.pending)').nth(n).waitFor();
    }
    if (panel === 'sidebar') await page.click('#toggle-sidebar');
    else { await page.click(`#toggle-${panel}`); await page.waitForTimeout(500); }
    await page.screenshot({ path: `/tmp/page-look/${w}-${scheme}-${panel}.png` });
    await ctx.close();
  }
} finally { await b.close(); await t.close(); await stub.close(); }
