/**
 * Debian's Chromium driven by playwright-core (which never downloads a browser), for the web view's
 * tests and benchmark. A page records what a person would notice went wrong: dialogs (alert, confirm),
 * script errors, console errors (Content-Security-Policy violations are reported there).
 */

import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CNIREC_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run, or null. They fail with it, never skip. */
export function browserProblem(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium; scripts/test.sh does), or set CNIREC_CHROMIUM`;
}

export async function launchChromium(): Promise<Browser> {
  const problem = browserProblem();
  if (problem) throw new Error(problem);
  // Root in a container: Chromium's sandbox needs user namespaces it may not have.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export interface WatchedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Dialogs opened, script errors, console errors: each a line. */
  readonly problems: string[];
  close(): Promise<void>;
}

/** A fresh tab (its own sessionStorage); with `token`, as if it had been typed into the prompt. */
export async function openPage(browser: Browser, opts: { token?: string } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
  if (opts.token) await context.addInitScript({ content: `sessionStorage.setItem('cnirec.token', ${JSON.stringify(opts.token)});` });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('dialog', (dialog) => {
    problems.push(`dialog ${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (err) => problems.push(`script error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  return { page, context, problems, close: () => context.close() };
}
