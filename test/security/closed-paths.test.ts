/**
 * Closed paths: every spelling of a route meets the route's auth (letter case, trailing slash) or is
 * refused (percent-encoded letters, dot segments); outbound calls to configured URLs do not follow a
 * redirect to another host and connect only to addresses that pass the check; runbook targets are
 * workflow webhooks only; the queue dashboard refuses cross-site requests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { eventually } from '../helpers/eventually.js';

process.env.ALERT_WEBHOOK_TOKEN = 'alert-secret';

// The automation system, and an internal service a redirect points at.
const internalHits: string[] = [];
const internal = createServer((req, res) => {
  internalHits.push(req.url!);
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"activeTargets":[]},"status":"success"}');
});
const automationSeen: string[] = [];
const automation = createServer((req, res) => {
  automationSeen.push(`${req.method} ${req.url}`);
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};
const internalUrl = await listen(internal);
// A configured system that answers with a redirect to another (internal) host.
const redirector = createServer((req, res) => void res.writeHead(302, { location: `${internalUrl}/api/v1/targets` }).end());
const redirectorUrl = await listen(redirector);
process.env.AUTOMATION_URL = await listen(automation);
process.env.AUTOMATION_API_KEY = 'n8n-key';
afterAll(() => Promise.all([internal, automation, redirector].map((s) => new Promise<void>((r) => s.close(() => r())))));

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const alert = { version: '4', groupKey: 'g', status: 'firing', receiver: 'r', groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://am', alerts: [{ status: 'firing', labels: { alertname: 'X' }, annotations: {}, startsAt: '2026-11-27T00:00:00Z', endsAt: '0001-01-01T00:00:00Z', fingerprint: 'f1' }] };

describe('every spelling of a route meets its auth', () => {
  it.each([
    ['/webhooks/ALERTMANAGER/default'],
    ['/Webhooks/AlertManager/default'],
    ['/webhooks/alertmanager/default/'],
  ])('POST %s without the source secret is a 401', async (path) => {
    const res = await api.request(path, { method: 'POST', json: alert, auth: false });
    expect(res.status).toBe(401);
  });

  it.each([['/webhooks/%61lertmanager/default'], ['/api/v1/%6Ceads'], ['/api//v1/leads']])('%s (not canonical) is a 400', async (path) => {
    const res = await fetch(api.url + path, { method: path.startsWith('/webhooks') ? 'POST' : 'GET', headers: { 'content-type': 'application/json' }, body: path.startsWith('/webhooks') ? JSON.stringify(alert) : undefined });
    expect(res.status).toBe(400);
  });

  it.each([['/API/V1/LEADS'], ['/api/v1/leads/'], ['/Api/V1/Tools']])('GET %s without a key is a 401', async (path) => {
    expect((await api.request(path, { auth: false })).status).toBe(401);
  });

  it('the secret still opens the webhook in any case', async () => {
    const res = await api.request('/webhooks/ALERTMANAGER/default', { method: 'POST', json: alert, auth: false, headers: { Authorization: 'Bearer alert-secret' } });
    expect(res.status).toBe(202);
  });
});

describe('outbound calls', () => {
  it('a call to a configured URL does not follow a redirect to another host', async () => {
    const { requestText } = await import('../../shared/clients/http.js');
    await expect(requestText('Prometheus', `${redirectorUrl}/api/v1/targets`, { timeoutMs: 2000 })).rejects.toThrow(/redirected to another host/);
    expect(internalHits).toEqual([]);
  });

  it('a guarded call connects only to addresses that pass the check, on the address it really connects to', async () => {
    const { requestText, withAddressGuard } = await import('../../shared/clients/http.js');
    const refuseLoopback = (ip: string) => (ip.startsWith('127.') || ip === '::1' ? `loopback ${ip}` : undefined);
    // localhost is looked up when connecting: the answer (loopback) is what is checked.
    const port = new URL(internalUrl).port;
    await expect(withAddressGuard(refuseLoopback, () => requestText('Prometheus', `http://localhost:${port}/api/v1/targets`, { timeoutMs: 2000 }))).rejects.toThrow(/loopback/);
    expect(internalHits).toEqual([]);
  });

  it('a runbook target must be a workflow webhook, not another REST path of the automation API', async () => {
    for (const target of ['/api/v1/audit', `${process.env.AUTOMATION_URL}/api/v1/users`, '/rest/workflows']) {
      const res = await api.request('/api/v1/runbooks', { method: 'POST', json: { name: `rb-${automationSeen.length}-${target.length}`, webhook_url: target, auto_trigger: false } });
      expect(res.status, target).toBe(400);
      expect((await res.json()).errors[0].path).toBe('body.webhook_url');
    }
    const ok = await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'rb-ok', webhook_url: '/webhook/restart', auto_trigger: false } });
    expect(ok.status).toBe(201);
    // A runbook stored earlier with a REST path is refused when it runs: nothing reaches the automation API.
    const { db } = await import('../../shared/db/index.js');
    const [legacy] = await db()('sre_runbooks').insert({ name: 'legacy-audit', webhook_url: '/api/v1/audit', matchers: '[]', parameters: '{}', auto_trigger: false }).returning('*');
    const queued = await (await api.request(`/api/v1/runbooks/${legacy.id}/execute`, { method: 'POST', json: {} })).json();
    const done = await eventually(async () => {
      const e = await (await api.request(`/api/v1/runbooks/executions/${queued.id}`)).json();
      return e.status === 'failed' ? e : null;
    }, 15_000, 'the legacy execution to fail');
    expect(done.error).toMatch(/webhook/);
    expect(automationSeen.filter((s) => s.includes('/api/v1/audit'))).toEqual([]);
  });
});

describe('the queue dashboard', () => {
  it('refuses a cross-site request even with the right basic auth', async () => {
    const admin = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
    const crossSite = await api.request('/admin/queues/api/queues/sessions/retry/failed', { method: 'PUT', auth: false, headers: { Authorization: admin, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const form = await api.request('/admin/queues/api/queues/sessions/add', { method: 'POST', auth: false, headers: { Authorization: admin, Origin: 'https://evil.example', 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=x' });
    expect(form.status).toBe(403);
    expect((await api.request('/admin/queues/api/queues', { auth: false, headers: { Authorization: admin } })).status).toBe(200);
  });
});
