import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's Chromium, used when it is installed. */
export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Headless Chromium: Debian's (/usr/bin/chromium) when it is installed, else the one shipped
 * inside the `@sparticuz/chromium` devDependency (unpacked to /tmp on first use), so a machine
 * with only Node and npm runs the browser tests too. `MNEMO_CHROMIUM=npm` takes the npm one
 * even when Debian's is there (to test that path); `MNEMO_CHROMIUM=system` insists on Debian's.
 * A missing browser is a failure with the fix in its message, never a silent skip.
 */
export async function launchChromium(): Promise<Browser> {
  const choice = process.env['MNEMO_CHROMIUM'] ?? '';
  if (choice !== 'npm' && existsSync(CHROMIUM)) {
    return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }
  if (choice === 'system') {
    throw new Error(
      `Chromium not found at ${CHROMIUM} (MNEMO_CHROMIUM=system). ` +
        'Install it with: apt-get update && apt-get install -y chromium, or unset MNEMO_CHROMIUM',
    );
  }
  let packaged: { executablePath(): Promise<string> };
  try {
    packaged = (await import('@sparticuz/chromium')).default;
  } catch (err) {
    throw new Error(
      `Chromium not found at ${CHROMIUM} and @sparticuz/chromium did not load (${(err as Error).message}): ` +
        'run npm ci, or install Debian\'s: apt-get update && apt-get install -y chromium',
    );
  }
  // Its own flag list is for one page per process on AWS Lambda (--single-process closes the
  // browser with its first context, --disable-web-security changes what the page may do):
  // the same flags as Debian's build instead, plus no zygote (it has no sandbox helper).
  return chromium.launch({ executablePath: await packaged.executablePath(), args: [...FLAGS, '--no-zygote'] });
}

/**
 * Collects into `into` every Content-Security-Policy violation a page of `context` logs:
 * Chromium's own console report and the DOM's `securitypolicyviolation` event. The page's
 * tests expect none (no flow of the page may trip its own policy).
 */
export async function watchCsp(context: BrowserContext, into: string[]): Promise<BrowserContext> {
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) into.push(message.text());
  });
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')));`);
  return context;
}
