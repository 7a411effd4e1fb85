/**
 * The portal chat asks before a change (issue 39 point 8) in real Chromium: the model asks to open a
 * case; the chat shows the question in plain words with Confirm / Cancel, scrolled into view below a
 * long conversation; nothing is opened until the person presses Confirm, which sends their yes
 * through the signed-in chat; Cancel sends their no.
 */
// needs: chromium
import { afterAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { startIdentity } from '../helpers/identity.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { db } from '../../shared/db/index.js';

// A model that opens a case titled after the message, then says it asked; "Tell me…" gets a long answer.
await useLocalLlm((req) => {
  const message = [...req.body.messages].reverse().find((m) => m.role === 'user')!.content!;
  if (message.startsWith('Tell me')) return { content: 'A long answer that fills the chat. '.repeat(40) };
  if (req.body.messages.some((m) => m.role === 'tool')) return { content: 'I asked you first.' };
  return { tool_calls: [{ id: 'c1', name: 'portal_open_case', arguments: JSON.stringify({ title: message, description: 'From the chat.' }) }] };
});

const accounts = { pat: { login: 'pat', password: 'pat', name: 'Pat Chat', email: 'pat@example.test', roles: [] } };
const idp = await startIdentity({ accounts });
const { startPlatform } = await import('../helpers/platform.js');
const app = await startPlatform({ port: idp.appPort });
const browser = await launchBrowser();
afterAll(() => browser.close());

const shows = (page: Page, text: string | RegExp) => expect.poll(() => page.getByText(text).count(), { timeout: 15_000 }).toBeGreaterThan(0);
/** Whether the Confirm / Cancel row lies wholly inside the visible part of the scrolling message list. */
const confirmRowInView = (page: Page) =>
  page.getByRole('group', { name: 'Confirm the change' }).evaluate((row) => {
    let list = row.parentElement!;
    while (!['auto', 'scroll'].includes(getComputedStyle(list).overflowY) || list.scrollHeight <= list.clientHeight) list = list.parentElement!;
    const [r, l] = [row.getBoundingClientRect(), list.getBoundingClientRect()];
    return r.top >= l.top && r.bottom <= l.bottom + 0.5;
  });
const cases = (title: string) => db()('portal_cases').where({ title }).select('title');

describe('portal chat: a change waits for Confirm', () => {
  it('shows the question with Confirm / Cancel; Cancel opens nothing, Confirm opens the case', async () => {
    const page = await signInAt(await browser.newContext({ viewport: { width: 1280, height: 800 } }), app.url, '/portal/chat', accounts.pat);
    const box = page.getByRole('textbox', { name: 'Message' });
    const confirmGroup = page.getByRole('group', { name: 'Confirm the change' });
    // A conversation longer than the chat's height: the question arrives at the bottom of a scrolled list.
    for (const topic of ['printers', 'toner']) {
      await box.fill(`Tell me about ${topic}`);
      await box.press('Enter');
      await expect.poll(() => page.getByText(/^A long answer that fills the chat\./).count(), { timeout: 15_000 }).toBe(topic === 'printers' ? 1 : 2);
    }

    await box.fill('Printer on fire');
    await box.press('Enter');
    await shows(page, /please confirm: portal_open_case .* title "Printer on fire"/);
    await expect.poll(() => confirmGroup.count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => confirmRowInView(page), { timeout: 5_000 }).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await shows(page, /^Cancelled: nothing was changed/);
    expect(await cases('Printer on fire')).toEqual([]);

    await box.fill('Printer still on fire');
    await box.press('Enter');
    await shows(page, /title "Printer still on fire"/);
    // The buttons come with the finished reply, a moment after its streamed text.
    await expect.poll(() => confirmGroup.count(), { timeout: 15_000 }).toBe(1);
    // The row comes a moment after the streamed text the list scrolled to: it is scrolled into view too.
    await expect.poll(() => confirmRowInView(page), { timeout: 5_000 }).toBe(true);
    await screenshot(page, 'portal-chat-confirm');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await shows(page, /^Done: portal_open_case /);
    expect(await cases('Printer still on fire')).toHaveLength(1);
    await expect.poll(() => confirmGroup.count(), { timeout: 15_000 }).toBe(0);
  });
});
