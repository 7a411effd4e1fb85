/**
 * The portal's history (from the agent API at its /sessions paths, here this platform) and
 * automations (from a local server speaking n8n's public API), each with its connection state.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, type SignedIn } from '../helpers/identity.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json as reply, localServer } from '../sre/alerting-helpers.js';

let n8nDown = false;
const n8n = await localServer((req, res) => {
  if (req.headers['x-n8n-api-key'] !== 'n8n-key' || req.headers['x-automation-api-key'] !== 'n8n-key' || n8nDown) {
    return reply(res, 401, { message: "'X-N8N-API-KEY' header required" });
  }
  if (req.url.startsWith('/api/v1/workflows')) return reply(res, 200, { data: [{ id: 'wf1', name: 'Restart web', active: true }, { id: 'wf2', name: 'Rotate logs', active: true }], nextCursor: null });
  if (req.url === '/api/v1/executions?limit=50') {
    return reply(res, 200, {
      data: [
        { id: 3, finished: false, mode: 'webhook', startedAt: '2026-11-23T10:02:00.000Z', stoppedAt: null, workflowId: 'wf1', status: 'running' },
        { id: 2, finished: false, mode: 'webhook', startedAt: '2026-11-23T10:01:00.000Z', stoppedAt: '2026-11-23T10:01:05.000Z', workflowId: 'wf2', status: 'error' },
        { id: 1, finished: true, mode: 'manual', startedAt: '2026-11-23T10:00:00.000Z', stoppedAt: '2026-11-23T10:00:03.000Z', workflowId: 'wf1', status: 'success' },
      ],
      nextCursor: null,
    });
  }
  return reply(res, 404, { message: 'not found' });
});
process.env.AUTOMATION_URL = n8n.url;
process.env.AUTOMATION_API_KEY = 'n8n-key';

const accounts = {
  ann: { login: 'ann', password: 'ann', name: 'Ann History', email: 'ann@example.test', roles: [] },
  bob: { login: 'bob', password: 'bob', name: 'Bob Other', email: 'bob@example.test', roles: [] },
};
let app: Platform;
let ann: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  const idp = await startIdentity({ accounts });
  app = await startPlatform({ port: idp.appPort });
  [ann, bob] = [await signIn(app.url, accounts.ann), await signIn(app.url, accounts.bob)];
});

const body = async <T = any>(res: Response, status: number): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};

describe('history', () => {
  it('lists the sessions of a chat with channel, created_at, message_count and a summary written at close', async () => {
    const annId = (await body(await ann.request('/api/portal/profile'), 200)).user_id;
    expect(await body(await ann.request('/api/portal/history'), 200)).toEqual({ connection: { state: 'connected', error: null }, sessions: [] });

    const question = 'My package never arrived and the tracking page has said "out for delivery" for nine days now, and nobody answers the phone at the depot: what can I do about it, and can you send a replacement?';
    expect(question.length).toBeGreaterThan(140);
    const chat = await body(await app.request('/api/chat', { method: 'POST', json: { user_id: annId, message: question } }), 200);
    await body(await app.request(`/api/sessions/${chat.session_id}/close`, { method: 'POST', json: {} }), 200);

    const history = await body(await ann.request('/api/portal/history'), 200);
    expect(history.connection).toEqual({ state: 'connected', error: null });
    expect(history.sessions).toHaveLength(1);
    const row = history.sessions[0];
    expect(row).toMatchObject({ session_id: chat.session_id, channel: 'chat', message_count: 2, status: 'closed' });
    expect(row.summary).toBe(`${question.slice(0, 139)}…`);
    expect(Date.parse(row.created_at)).toBeGreaterThan(Date.now() - 60_000);

    const one = await body(await ann.request(`/api/portal/history/${chat.session_id}`), 200);
    expect(one.messages.map((m: { role: string; channel: string }) => [m.role, m.channel])).toEqual([['user', 'chat'], ['assistant', 'chat']]);
    expect((await bob.request(`/api/portal/history/${chat.session_id}`)).status).toBe(404);
    expect((await body(await bob.request('/api/portal/history'), 200)).sessions).toEqual([]);
  });

  it('the /sessions aliases answer like /api/sessions, with X-API-Key; any lowercase channel name is accepted', async () => {
    const annId = (await body(await ann.request('/api/portal/profile'), 200)).user_id;
    const list = await body(await app.request(`/sessions?user_id=${annId}&limit=50`), 200);
    const apiList = await body(await app.request(`/api/sessions?user_id=${annId}&limit=50`), 200);
    expect(list).toEqual(apiList);
    expect((await app.request(`/sessions?user_id=${annId}`, { auth: false })).status).toBe(401);
    expect((await app.request('/api/health', { headers: { 'X-API-Key': testApiKey } })).status).toBe(200);

    const resolved = await body(await app.request('/api/sessions/resolve', { method: 'POST', json: { user_id: annId } }), 200);
    expect((await app.request(`/api/sessions/${resolved.session_id}/interactions`, { method: 'POST', json: { channel: 'siri' } })).status).toBe(201);
    const bad = await body(await app.request(`/api/sessions/${resolved.session_id}/interactions`, { method: 'POST', json: { channel: 'Siri!' } }), 400);
    expect(bad.errors.map((e: { path: string }) => e.path)).toEqual(['body.channel']);
    const detail = await body(await app.request(`/sessions/${resolved.session_id}`), 200);
    expect(detail).toMatchObject({ channel: 'siri', message_count: 0, summary: null, messages: [] });
  });
});

describe('automations', () => {
  it('shows executions with workflowName and status from the n8n API, sending both key headers', async () => {
    n8nDown = false;
    const res = await body(await ann.request('/api/portal/automations'), 200);
    expect(res.connection).toEqual({ state: 'connected', error: null });
    expect(res.executions).toEqual([
      { id: '3', workflowName: 'Restart web', status: 'running', startedAt: '2026-11-23T10:02:00.000Z', stoppedAt: null },
      { id: '2', workflowName: 'Rotate logs', status: 'failed', startedAt: '2026-11-23T10:01:00.000Z', stoppedAt: '2026-11-23T10:01:05.000Z' },
      { id: '1', workflowName: 'Restart web', status: 'success', startedAt: '2026-11-23T10:00:00.000Z', stoppedAt: '2026-11-23T10:00:03.000Z' },
    ]);
    expect(n8n.requests.some((r) => r.url === '/api/v1/executions?limit=50')).toBe(true);
  });

  it('reports the failed connection with the error instead of failing', async () => {
    n8nDown = true;
    const res = await body(await ann.request('/api/portal/automations'), 200);
    expect(res.connection.state).toBe('failed');
    expect(res.connection.error).toMatch(/answered 401/);
    expect(res.executions).toEqual([]);
    n8nDown = false;
  });
});
