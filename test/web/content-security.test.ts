/**
 * The content security policy of the built app (npm start) allows no inline script: the app and the
 * API reference load every script from a file, so Chromium runs them with no CSP violation, while an
 * inline script slipped into a page does not run. (Vite's development server keeps inline scripts
 * for its preamble; every other browser test runs on it.)
 */
// needs: chromium
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsoleMessage } from 'playwright-core';
import { signIn, startIdentity } from '../helpers/identity.js';
import { launchBrowser, screenshot, screensDir, signInAt } from '../helpers/browser.js';

const dir = await mkdtemp(path.join(os.tmpdir(), 'sb-csp-'));
await mkdir(path.join(dir, 'assets'));
await writeFile(
  path.join(dir, 'index.html'),
  '<!doctype html><title>built switchboard app</title><div id="root"></div><script type="module" src="/assets/app-1a2b.js"></script><script>window.inlineRan = true;</script>',
);
await writeFile(path.join(dir, 'assets/app-1a2b.js'), 'document.getElementById("root").textContent = "app loaded from a file";');

const idp = await startIdentity();
process.env.API_KEYS ??= 'test-key';
const { startServer } = await import('../../api/server.js');
const { url } = await startServer(idp.appPort, '127.0.0.1', [], { web: 'built', webDir: dir });
const browser = await launchBrowser();

/** Console messages of a page that report a content security policy violation. */
function cspViolations(messages: ConsoleMessage[]): string[] {
  return messages.map((m) => m.text()).filter((t) => /Content Security Policy/i.test(t));
}

describe('content security policy of the built app', () => {
  it('pages allow scripts from this origin only, none inline', async () => {
    const sre = await signIn(url, 'sre');
    for (const res of [await fetch(`${url}/api/docs`), await sre.request('/admin/alerts')]) {
      expect(res.status).toBe(200);
      const policy = res.headers.get('content-security-policy') ?? '';
      expect(policy, res.url).toContain("script-src 'self'");
      expect(/script-src [^;]*unsafe-inline/.test(policy), res.url).toBe(false);
    }
  });

  it('the API reference renders in Chromium with no CSP violation', async () => {
    const page = await browser.newPage();
    const messages: ConsoleMessage[] = [];
    page.on('console', (m) => messages.push(m));
    await page.goto(`${url}/api/docs`);
    await page.locator('.swagger-ui .info .title').filter({ hasText: 'switchboard' }).waitFor({ timeout: 30_000 });
    await page.locator('.opblock-summary-path').first().waitFor();
    // The top of the page: the whole reference is many screens long.
    await page.screenshot({ path: path.join(screensDir, 'api-docs-strict-csp.png') });
    expect(cspViolations(messages)).toEqual([]);
    await page.close();
  }, 60_000);

  it('the console page runs its bundle, and an inline script in it is refused', async () => {
    const context = await browser.newContext();
    const messages: ConsoleMessage[] = [];
    context.on('console', (m) => messages.push(m));
    const page = await signInAt(context, url, '/admin', 'sre');
    await page.getByText('app loaded from a file').waitFor();
    await screenshot(page, 'console-strict-csp');
    expect(await page.evaluate(() => (window as { inlineRan?: boolean }).inlineRan)).toBeUndefined();
    expect(cspViolations(messages).length).toBeGreaterThan(0);
    await context.close();
  }, 60_000);
});
