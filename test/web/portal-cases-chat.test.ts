/**
 * The portal's case, history, automation and chat screens in real Chromium. People sign in through
 * the embedded provider; a requester opens a case that staff work; the web chat answers from a
 * document through search_documents (local model server) and shows another channel's message live;
 * history comes from the agent API (this platform, behind a local relay that can be cut) and
 * automations from a local server speaking n8n's API. Every screen is screenshotted.
 */
// needs: chromium
import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { json as reply, localServer } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { signIn, startIdentity, type SignedIn } from '../helpers/identity.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { makePdf, uploadDocument } from '../helpers/documents.js';
import { summaryPrompt } from '../../shared/sessions/summary.js';

// A model that searches the person's documents for the question, then answers naming the file it found.
const llm = await useLocalLlm((req) => {
  if (req.body.messages[0]?.content === summaryPrompt) {
    return { content: req.body.messages[1]?.content?.includes('llamas') ? 'Asked how many llamas the census counted.' : 'Said hello.' };
  }
  const tool = req.body.messages.find((m) => m.role === 'tool');
  if (!tool) return { tool_calls: [{ id: 'call_1', name: 'search_documents', arguments: JSON.stringify({ query: 'llama census' }) }] };
  const hits = (JSON.parse(tool.content!) as { hits: Array<{ filename: string; snippet: string }> }).hits;
  return { content: hits.length ? `According to ${hits[0]!.filename}: ${hits[0]!.snippet.replace(/\*\*/g, '')}` : 'I found nothing in your documents.' };
});

// The automation system: n8n's public API, and its failure (a refused key) on demand.
let n8nDown = false;
await localServer((req, res) => {
  if (n8nDown) return reply(res, 401, { message: "'X-N8N-API-KEY' header required" });
  if (req.url.startsWith('/api/v1/workflows')) return reply(res, 200, { data: [{ id: 'wf1', name: 'Restart web', active: true }, { id: 'wf2', name: 'Rotate logs', active: true }], nextCursor: null });
  if (req.url.startsWith('/api/v1/executions')) {
    const at = (m: number, s = 0) => new Date(Date.UTC(2026, 10, 23, 10, m, s)).toISOString();
    return reply(res, 200, {
      data: [
        { id: 3, finished: false, mode: 'webhook', startedAt: at(2), stoppedAt: null, workflowId: 'wf1', status: 'running' },
        { id: 2, finished: false, mode: 'webhook', startedAt: at(1), stoppedAt: at(1, 5), workflowId: 'wf2', status: 'error' },
        { id: 1, finished: true, mode: 'manual', startedAt: at(0), stoppedAt: at(0, 3), workflowId: 'wf1', status: 'success' },
      ],
      nextCursor: null,
    });
  }
  return reply(res, 404, { message: 'not found' });
}).then((n8n) => Object.assign(process.env, { AUTOMATION_URL: n8n.url, AUTOMATION_API_KEY: 'n8n-key' }));

// The agent API is this platform, reached through a relay that can be cut to show the failure state.
let agentDown = false;
let platformUrl = '';
const agentRelay = await localServer(async (req, res) => {
  if (agentDown) return void res.socket?.destroy();
  const answer = await fetch(platformUrl + req.url, { headers: { 'X-API-Key': String(req.headers['x-api-key'] ?? '') } });
  res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
});
process.env.AGENT_API_URL = agentRelay.url;

const accounts = {
  pat: { login: 'pat', password: 'pat', name: 'Pat Requester', email: 'pat@example.test', roles: [] },
  quinn: { login: 'quinn', password: 'quinn', name: 'Quinn Other', email: 'quinn@example.test', roles: [] },
  stella: { login: 'stella', password: 'stella', name: 'Stella Staff', email: 'stella@example.test', roles: ['staff'] },
};
const idp = await startIdentity({ accounts });
const { startPlatform } = await import('../helpers/platform.js');
const app = await startPlatform({ port: idp.appPort });
platformUrl = app.url;
const browser = await launchBrowser();

let patCtx: BrowserContext;
let pat: Page;
let patApi: SignedIn;
let caseId = '';
let sessionId = '';

const ok = async <T = any>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (text ? JSON.parse(text) : undefined) as T;
};
/** Waits until `text` shows on the page (no reload). */
const shows = (page: Page, text: string | RegExp) => expect.poll(() => page.getByText(text).count(), { timeout: 15_000 }).toBeGreaterThan(0);
/** A narrow (phone) screenshot of the current page, then back to the desktop size. */
async function narrow(page: Page, name: string) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await screenshot(page, name);
  await page.setViewportSize({ width: 1280, height: 800 });
}

beforeAll(async () => {
  patCtx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  pat = await signInAt(patCtx, app.url, '/cases', accounts.pat);
  patApi = await signIn(app.url, accounts.pat);
}, 120_000);

describe('support cases', () => {
  it('a requester opens a P2 case (a missing title is a field error); staff assign, comment and start work; the requester sees both', async () => {
    await shows(pat, 'No cases yet. Open one when you need help.');
    await screenshot(pat, 'portal-1-cases-empty');

    await pat.getByRole('button', { name: 'New case' }).click();
    const dialog = pat.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Open case' }).click();
    await expect.poll(() => dialog.getByLabel('Title').getAttribute('aria-invalid')).toBe('true');
    await shows(pat, 'must not be empty');
    await screenshot(pat, 'portal-2-case-new-field-error');
    await dialog.getByLabel('Title').fill('Printer on floor 3 is jammed');
    await dialog.getByLabel('Description').fill('Paper jam warning since this morning; the tray is empty.');
    await dialog.getByText('P2', { exact: true }).click();
    await dialog.getByRole('button', { name: 'Open case' }).click();
    await pat.waitForURL(/\/cases\/[0-9a-f-]{36}$/);
    caseId = pat.url().split('/').at(-1)!;
    expect(await ok(await patApi.request(`/api/portal/cases/${caseId}`))).toMatchObject({ title: 'Printer on floor 3 is jammed', priority: 'P2', status: 'open', requester_name: 'Pat Requester' });
    await shows(pat, 'Comments (0)');
    await screenshot(pat, 'portal-3-case-requester');

    const staffCtx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const staff = await signInAt(staffCtx, app.url, '/cases', accounts.stella);
    await shows(staff, 'Pat Requester');
    await screenshot(staff, 'portal-4-cases-staff');
    await staff.getByRole('link', { name: 'Printer on floor 3 is jammed' }).click();
    await shows(staff, 'Work on this case');
    await staff.getByRole('combobox', { name: 'Assignee' }).click();
    await staff.getByRole('option', { name: 'Stella Staff' }).click();
    await eventually(async () => (await ok(await patApi.request(`/api/portal/cases/${caseId}`))).assignee_name === 'Stella Staff', 10_000, 'assigned');
    await staff.getByLabel('Add a comment').fill('A technician is on the way with a new fuser.');
    await staff.getByRole('button', { name: 'Add comment' }).click();
    await shows(staff, 'Comments (1)');
    // A colleague starts work meanwhile (through the API): the page still offers the move, the 409 names the moves left.
    const colleague = await signIn(app.url, accounts.stella);
    await ok(await colleague.request(`/api/portal/cases/${caseId}/status`, { method: 'POST', json: { status: 'in_progress' } }));
    await staff.getByRole('button', { name: 'Start work (in progress)' }).click();
    await shows(staff, 'Allowed moves now:');
    await expect.poll(() => staff.getByRole('alert').textContent()).toContain('waiting, resolved');
    await screenshot(staff, 'portal-5a-case-409');
    await eventually(async () => (await ok(await patApi.request(`/api/portal/cases/${caseId}`))).status === 'in_progress', 10_000, 'in progress');
    await shows(staff, 'Mark resolved');
    await screenshot(staff, 'portal-5-case-staff');

    // The requester sees the comment and the new status.
    await pat.reload();
    await shows(pat, 'A technician is on the way with a new fuser.');
    await shows(pat, 'in progress');
    await expect.poll(() => pat.getByText('Stella Staff').count()).toBeGreaterThan(0);
    await screenshot(pat, 'portal-6-case-requester-after');
    await narrow(pat, 'portal-6n-case-narrow');

    // Filters are in the URL: a shared address shows the same list.
    await pat.goto(`${app.url}/cases?status=in_progress&priority=P2`);
    await expect.poll(() => pat.getByRole('link', { name: 'Printer on floor 3 is jammed' }).count(), { timeout: 15_000 }).toBe(1);
    await screenshot(pat, 'portal-7-cases-filtered');
    await pat.goto(`${app.url}/cases?q=toner`);
    await shows(pat, 'No cases match these filters.');
    await pat.goto(`${app.url}/cases?q=floor%203`);
    await expect.poll(() => pat.getByRole('link', { name: 'Printer on floor 3 is jammed' }).count(), { timeout: 15_000 }).toBe(1);
    await narrow(pat, 'portal-7n-cases-narrow');

    // The requester withdraws the case: closing is final, so the page asks first.
    await pat.goto(`${app.url}/cases/${caseId}`);
    await pat.getByRole('button', { name: 'Close case' }).click();
    await shows(pat, 'Closed cases cannot be reopened');
    await screenshot(pat, 'portal-8-case-close-confirm');
    await pat.getByRole('dialog').getByRole('button', { name: 'Close case' }).click();
    await eventually(async () => (await ok(await patApi.request(`/api/portal/cases/${caseId}`))).status === 'closed', 10_000, 'closed');
    await shows(pat, 'Closed cases are final');
    expect(await pat.getByLabel('Add a comment').count()).toBe(0);
    await staffCtx.close();
  }, 120_000);

  it("a second person cannot open the first one's case, by URL (not-found page) or API (404)", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const other = await signInAt(ctx, app.url, `/cases/${caseId}`, accounts.quinn);
    await shows(other, 'Case not found');
    expect(await other.getByText('Printer on floor 3 is jammed').count()).toBe(0);
    await screenshot(other, 'portal-9-case-not-found');
    const quinn = await signIn(app.url, accounts.quinn);
    expect((await quinn.request(`/api/portal/cases/${caseId}`)).status).toBe(404);
    expect((await quinn.request(`/api/portal/cases/${caseId}/comments`, { method: 'POST', json: { body: 'hi' } })).status).toBe(404);
    await other.goto(`${app.url}/cases`);
    await shows(other, 'No cases yet. Open one when you need help.');
    await ctx.close();
  }, 60_000);
});

describe('web chat', () => {
  it('answers from a document through search_documents; a message from another channel arrives live', async () => {
    const doc = await ok(await uploadDocument(patApi, 'census.pdf', makePdf('The 2026 farm census counted forty two llamas on the hill.'), 'application/pdf'), 201);
    await eventually(async () => (await ok(await patApi.request(`/api/portal/documents/${doc.document_id}`))).rag_status === 'indexed', 20_000, 'indexed');

    await pat.goto(`${app.url}/portal/chat`);
    await shows(pat, 'No messages yet. Say hello below.');
    await pat.getByRole('textbox', { name: 'Message' }).fill('How many llamas were counted?');
    await pat.getByRole('textbox', { name: 'Message' }).press('Enter');
    await shows(pat, /According to census\.pdf: .*forty two llamas/);
    const toolTurn = llm.requests.find((r) => r.body.messages.some((m) => m.role === 'tool'));
    expect(toolTurn?.body.messages.find((m) => m.tool_calls)?.tool_calls?.[0]?.function.name).toBe('search_documents');

    const chat = await ok(await patApi.request('/api/portal/chat'));
    sessionId = chat.session_id;
    expect(chat.messages.map((m: { role: string; channel: string }) => [m.role, m.channel])).toEqual([['user', 'chat'], ['assistant', 'chat']]);
    await shows(pat, 'live');

    // Another channel publishes into the same session: the chat shows it without a reload, with its channel.
    const slack = await ok(await app.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel: 'slack' } }), 201);
    await ok(await app.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { channel: 'slack', role: 'user', content: 'Also: the barn door is stuck (sent from Slack).', interaction_id: slack.interaction_id } }));
    await shows(pat, 'Also: the barn door is stuck (sent from Slack).');
    expect(await pat.locator('[data-channel="slack"]').count()).toBe(1);
    await shows(pat, 'via Slack');

    // The same words again, a new message: it shows a second time, although the conversation read
    // from the server (after a reload) already holds a message of that text.
    await pat.reload();
    await shows(pat, 'live');
    await ok(await app.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { channel: 'slack', role: 'user', content: 'Also: the barn door is stuck (sent from Slack).', interaction_id: slack.interaction_id } }));
    await expect.poll(() => pat.locator('[data-channel="slack"]').count(), { timeout: 15_000 }).toBe(2);
    const ids = (await ok(await patApi.request('/api/portal/chat'))).messages.map((m: { message_id: string }) => m.message_id);
    expect(new Set(ids).size).toBe(4);
    await screenshot(pat, 'portal-10-chat');
    await narrow(pat, 'portal-10n-chat-narrow');

    // Other people never get this session's stream.
    const quinn = await signIn(app.url, accounts.quinn);
    expect((await quinn.request(`/api/portal/chat/${sessionId}/events`)).status).toBe(404);
  }, 120_000);
});

describe('history', () => {
  it('lists the sessions with channel, created_at, message_count and summary, and opens one; an unreachable agent API is shown', async () => {
    await ok(await app.request(`/api/sessions/${sessionId}/close`, { method: 'POST', json: {} }));
    // The open chat sees its session end: the stream's final event, then nothing more to follow.
    await shows(pat, 'no conversation yet');
    // Sessions begun on voice, Siri and a channel without its own icon.
    const patId = (await ok(await patApi.request('/api/portal/profile'))).user_id;
    for (const channel of ['voice', 'siri', 'fax']) {
      const s = await ok(await app.request('/api/sessions/resolve', { method: 'POST', json: { user_id: patId } }));
      const i = await ok(await app.request(`/api/sessions/${s.session_id}/interactions`, { method: 'POST', json: { channel } }), 201);
      await ok(await app.request(`/api/sessions/${s.session_id}/messages`, { method: 'POST', json: { channel, role: 'user', content: `Hello over ${channel}`, interaction_id: i.interaction_id } }));
      await ok(await app.request(`/api/sessions/${s.session_id}/close`, { method: 'POST', json: {} }));
    }
    const history = await eventually(async () => {
      const h = await ok(await patApi.request('/api/portal/history'));
      return h.sessions.find((s: { session_id: string; summary: string | null }) => s.session_id === sessionId)?.summary ? h : undefined;
    }, 15_000, 'the summary');
    expect(history.sessions).toHaveLength(4);

    await pat.goto(`${app.url}/history`);
    const table = pat.getByRole('table', { name: 'Conversations' });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 15_000 }).toBe(5);
    await shows(pat, 'Asked how many llamas the census counted.');
    for (const label of ['Web chat', 'Voice', 'Siri', 'fax']) expect(await table.getByLabel(`Channel ${label}`).count(), label).toBe(1);
    const chatRow = table.getByRole('row').filter({ hasText: 'Asked how many llamas' });
    expect(await chatRow.getByRole('cell').nth(2).textContent()).toBe('4');
    await shows(pat, 'connected');
    await screenshot(pat, 'portal-11-history');
    await narrow(pat, 'portal-11n-history-narrow');

    await chatRow.getByRole('link').click();
    await pat.waitForURL(`${app.url}/history/${sessionId}`);
    const messages = pat.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    await expect.poll(() => messages.count(), { timeout: 15_000 }).toBe(4);
    await shows(pat, 'via Slack');
    await screenshot(pat, 'portal-12-conversation');

    agentDown = true;
    try {
      await pat.goto(`${app.url}/history`);
      await shows(pat, 'Cannot reach the agent API');
      await screenshot(pat, 'portal-13-history-unreachable');
      expect(await ok(await patApi.request('/api/portal/history'))).toMatchObject({ connection: { state: 'failed' }, sessions: [] });
    } finally {
      agentDown = false;
    }
  }, 120_000);
});

describe('automations', () => {
  it('shows workflowName, status, startedAt and stoppedAt with the connection state, and the failure with its error', async () => {
    await pat.goto(`${app.url}/automations`);
    const table = pat.getByRole('table', { name: 'Executions' });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 15_000 }).toBe(4);
    for (const status of ['running', 'failed', 'success']) expect(await table.getByText(status, { exact: true }).count(), status).toBe(1);
    expect(await table.getByText('Rotate logs').count()).toBe(1);
    expect(await table.getByText('Restart web').count()).toBe(2);
    await shows(pat, 'connected');
    await screenshot(pat, 'portal-14-automations');

    await pat.goto(`${app.url}/automations?status=failed`);
    await expect.poll(() => table.getByRole('row').count(), { timeout: 15_000 }).toBe(2);
    expect(await table.getByText('Rotate logs').count()).toBe(1);
    await narrow(pat, 'portal-14n-automations-narrow');

    n8nDown = true;
    try {
      await pat.goto(`${app.url}/automations`);
      await shows(pat, 'Cannot reach the automation API');
      await shows(pat, /401/);
      await screenshot(pat, 'portal-15-automations-failed');
    } finally {
      n8nDown = false;
    }
  }, 60_000);
});
