/**
 * Real Chromium for browser tests: Debian's /usr/bin/chromium driven by playwright-core (no browser
 * downloads). One browser per test file; people sign in by typing into the embedded provider's form.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { devAccounts, type AccountName } from './identity.js';
import type { DevAccount } from '../../shared/identity/dev-provider.js';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where screenshots go (gitignored). */
export const screensDir = path.resolve('test-results/screens');

/** Launches the browser for this file; closed after the file. */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  afterAll(() => browser.close());
  return browser;
}

/** Opens `appUrl + path` in `context`; when sent to the provider's login form, signs in as `who` (a dev account or one given to startIdentity) and waits to be back on the app. */
export async function signInAt(context: BrowserContext, appUrl: string, pathname: string, who: AccountName | DevAccount): Promise<Page> {
  const account = typeof who === 'string' ? devAccounts[who] : who;
  const page = await context.newPage();
  await page.goto(appUrl + pathname);
  await page.getByLabel('Username').waitFor({ timeout: 60_000 });
  await page.getByLabel('Username').fill(account.login);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.href.startsWith(appUrl + pathname), { timeout: 30_000 });
  return page;
}

/** Saves a screenshot of the page as test-results/screens/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screensDir, { recursive: true });
  const file = path.join(screensDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
  console.log(`screenshot: ${path.relative(process.cwd(), file)}`);
  return file;
}
