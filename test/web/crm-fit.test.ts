/**
 * What a salesperson sees of the demo data at 1280 px in real Chromium: no status badge cut short,
 * every column of the board inside the page (no clipped column, no sideways scroll), money in one
 * format on the leads list, the lead page and the board, and an icon on the platform and the sign-in.
 */
// needs: chromium
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { startIdentity } from '../helpers/identity.js';
import { startDevAutomation } from '../../shared/sre/runbooks/dev-automation.js';
import { onShutdown } from '../../shared/lifecycle.js';

const idp = await startIdentity();
// As npm run dev -- --demo does without AUTOMATION_URL (the demo's runbooks name workflows).
const automation = await startDevAutomation();
onShutdown('demo automation', automation.close);
process.env.AUTOMATION_URL = automation.url;
const { startPlatform, testApiKey } = await import('../helpers/platform.js');
const { seedDemo } = await import('../../shared/cli/demo.js');
const app = await startPlatform({ port: idp.appPort });
const browser = await launchBrowser();

/** "$76,000": the one way the console writes an amount. */
const moneyFormat = /^\$\d{1,3}(,\d{3})*$/;

let sales: BrowserContext;
let page: Page;

beforeAll(async () => {
  await seedDemo({ baseUrl: app.url, apiKey: testApiKey });
  sales = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signInAt(sales, app.url, '/admin/crm/leads', 'sales');
}, 120_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') await screenshot(page, `crm-fit-failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, '-')}`);
});

/** Badges whose text does not fit (Mantine cuts the label with "…"), and whether the page scrolls sideways. */
const fit = () =>
  page.evaluate(() => ({
    cutBadges: [...document.querySelectorAll<HTMLElement>('.mantine-Badge-root, .mantine-Badge-label')].filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent),
    sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth,
  }));

describe('CRM screens at 1280 px', () => {
  it('leads list: every status badge whole, estimated values as money', async () => {
    const table = page.getByRole('table', { name: 'Leads' });
    await table.getByRole('link', { name: 'Hannah Kowalski' }).waitFor();
    expect(await fit()).toEqual({ cutBadges: [], sideways: false });
    const statuses = await table.locator('.mantine-Badge-root').allTextContents();
    expect(statuses.map((s) => s.toLowerCase()).sort()).toEqual(['contacted', 'contacted', 'converted', 'converted', 'new', 'new', 'qualified', 'qualified', 'unqualified']);
    const column = (await table.locator('thead th').allTextContents()).indexOf('Est. value');
    const values = await table.locator(`tbody tr td:nth-child(${column + 1})`).allTextContents();
    expect(values).toHaveLength(9);
    expect(values.filter((v) => !moneyFormat.test(v))).toEqual([]);
    expect(values).toContain('$76,000');
    await screenshot(page, 'crm-fit-leads');
  });

  it('lead page: the estimated value as money', async () => {
    await page.getByRole('link', { name: 'Hannah Kowalski' }).click();
    await page.getByRole('heading', { name: 'Hannah Kowalski' }).waitFor();
    await page.getByText('$76,000', { exact: true }).waitFor();
    expect(await page.getByText('76000', { exact: true }).count()).toBe(0);
    expect(await fit()).toEqual({ cutBadges: [], sideways: false });
  });

  it('board: every column inside the page, nothing inside a column spilling out, every card\'s name whole; amounts as money, "100 %" whole on Closed Won', async () => {
    await page.goto(`${app.url}/admin/crm/pipeline`);
    const stages = ['Lead', 'Discovery', 'Proposal', 'Negotiation', 'Closed Won', 'Closed Lost'];
    for (const s of stages) await page.getByRole('region', { name: `Stage ${s}` }).getByRole('article').first().waitFor();
    expect(await fit()).toEqual({ cutBadges: [], sideways: false });
    const spills = await page.evaluate(() => {
      const board = document.querySelector<HTMLElement>('[aria-label="Board"]')!;
      const out: string[] = [];
      if (board.scrollWidth > board.clientWidth) out.push(`board scrolls: ${board.scrollWidth} > ${board.clientWidth}`);
      const page = board.getBoundingClientRect();
      for (const column of board.querySelectorAll<HTMLElement>('[role="region"]')) {
        const c = column.getBoundingClientRect();
        if (c.left < page.left - 0.5 || c.right > page.right + 0.5) out.push(`${column.getAttribute('aria-label')} outside the board`);
        for (const e of column.querySelectorAll<HTMLElement>('*')) {
          const r = e.getBoundingClientRect();
          if (r.width && (r.left < c.left - 0.5 || r.right > c.right + 0.5)) out.push(`${column.getAttribute('aria-label')}: "${e.textContent?.slice(0, 30)}" spills out`);
        }
        // A card's name wraps whole: no line clamp or ellipsis hides its end.
        for (const card of column.querySelectorAll<HTMLElement>('[role="article"]')) {
          const name = [...card.querySelectorAll<HTMLElement>('p')].find((p) => p.textContent === card.getAttribute('aria-label'));
          if (!name) out.push(`${column.getAttribute('aria-label')}: card "${card.getAttribute('aria-label')}" shows no whole name`);
          else if (name.scrollHeight > name.clientHeight + 1 || name.scrollWidth > name.clientWidth + 1) out.push(`${column.getAttribute('aria-label')}: "${name.textContent}" cut short`);
        }
      }
      return out;
    });
    expect(spills).toEqual([]);
    expect(await page.getByRole('region', { name: 'Stage Closed Won' }).locator('.mantine-Badge-root').first().textContent()).toBe('100 %');
    const amounts = await page.locator('[aria-label="Board"] [aria-label="Amount"]').allTextContents();
    expect(amounts.length).toBeGreaterThanOrEqual(10);
    expect(amounts.filter((a) => !moneyFormat.test(a))).toEqual([]);
    expect(amounts).toContain('$76,000');
    await screenshot(page, 'crm-fit-board');
  });

  it('an icon at /favicon.ico on the platform and on the sign-in page', async () => {
    for (const origin of [app.url, idp.provider.issuer]) {
      const res = await fetch(`${origin}/favicon.ico`);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('content-type'), origin).toMatch(/^image\/x-icon/);
      expect((await res.arrayBuffer()).byteLength, origin).toBeGreaterThan(100);
    }
  });
});
