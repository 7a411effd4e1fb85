/**
 * Every channel shows with its own icon in the portal (Chromium): the history lists conversations
 * begun on SMS, email, the messaging app, Slack, voice and the web chat, each with its channel's
 * icon and name; the chat page shows messages from SMS and email with theirs. Screenshotted.
 */
// needs: chromium
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { signIn, startIdentity } from '../helpers/identity.js';

const accounts = { rita: { login: 'rita', password: 'rita', name: 'Rita Channels', email: 'rita@example.test', roles: [] } };
const idp = await startIdentity({ accounts });
const { startPlatform } = await import('../helpers/platform.js');
const app = await startPlatform({ port: idp.appPort });

let browser: Browser;
let page: Page;
let userId = '';
beforeAll(async () => {
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signInAt(ctx, app.url, '/history', accounts.rita);
  userId = (await (await (await signIn(app.url, accounts.rita)).request('/api/portal/profile')).json()).user_id;
}, 120_000);
afterAll(() => browser?.close());

const post = async (path: string, json: unknown) => {
  const res = await app.request(path, { method: 'POST', json });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.json();
};
/** A session of the user with one interaction and one message on `channel`; closed unless `keepOpen`. */
async function conversation(channel: string, text: string, keepOpen = false) {
  const s = await post('/api/sessions/resolve', { user_id: userId });
  const i = await post(`/api/sessions/${s.session_id}/interactions`, { channel });
  await post(`/api/sessions/${s.session_id}/messages`, { channel, role: 'user', content: text, interaction_id: i.interaction_id });
  if (!keepOpen) await post(`/api/sessions/${s.session_id}/close`, {});
  return s.session_id as string;
}

describe('channel icons', () => {
  it('history shows each channel with its icon and name', async () => {
    const channels = [['sms', 'SMS'], ['email', 'Email'], ['chatapp', 'Messaging app'], ['slack', 'Slack'], ['voice', 'Voice'], ['chat', 'Web chat']] as const;
    for (const [channel] of channels) await conversation(channel, `Hello over ${channel}`);
    await page.goto(`${app.url}/history`);
    const table = page.getByRole('table', { name: 'Conversations' });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 15_000 }).toBe(channels.length + 1);
    for (const [, label] of channels) {
      const icon = table.getByLabel(`Channel ${label}`);
      expect(await icon.count(), label).toBe(1);
      // A channel of its own, not the generic bubble every unknown name gets.
      expect(await icon.evaluate((svg) => svg.getAttribute('class')), label).not.toContain('icon-tabler-message-circle');
    }
    await screenshot(page, 'portal-channels-history');
  }, 60_000);

  it('the chat page shows SMS and email messages with their channel', async () => {
    const sessionId = await conversation('sms', 'Sent by SMS: running late', true);
    const email = await post(`/api/sessions/${sessionId}/interactions`, { channel: 'email' });
    await post(`/api/sessions/${sessionId}/messages`, { channel: 'email', role: 'user', content: 'Sent by email: the invoice is attached', interaction_id: email.interaction_id });
    await page.goto(`${app.url}/portal/chat`);
    await expect.poll(() => page.locator('[data-channel="email"]').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.locator('[data-channel="sms"]').count()).toBe(1);
    expect(await page.getByText('via SMS').count()).toBe(1);
    expect(await page.getByText('via Email').count()).toBe(1);
    await screenshot(page, 'portal-channels-chat');
  }, 60_000);
});
