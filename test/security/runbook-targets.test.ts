import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { json, localServer } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { up as disableForeignRunbooks } from '../../migrations/20261123001000_runbook_foreign_targets.js';

// The automation system (n8n's webhook wire format) and another host that would like its key.
const n8n = await localServer((req, res) => {
  if (req.url === '/webhook/ok') return json(res, 200, { message: 'Workflow was started' });
  if (req.url === '/webhook/big') return json(res, 200, { blob: 'x'.repeat(100_000) });
  if (req.url === '/webhook/broken') return json(res, 404, { message: 'INTERNAL-DETAIL-7f3a of the automation system' });
  json(res, 404, { message: 'Not Found' });
});
const elsewhere = await localServer((_req, res) => json(res, 200, { stolen: true }));

process.env.AUTOMATION_URL = n8n.url;
process.env.AUTOMATION_API_KEY = 'automation-secret-key';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

let seq = 0;
const create = (webhook_url: string) => api.request('/api/v1/runbooks', { method: 'POST', json: { name: `rb-${++seq}`, webhook_url, auto_trigger: false } });
const getJson = async (path: string) => (await api.request(path)).json();
async function runToEnd(runbookId: string) {
  const queued = await (await api.request(`/api/v1/runbooks/${runbookId}/execute`, { method: 'POST', json: {} })).json();
  return eventually(async () => {
    const e = await getJson(`/api/v1/runbooks/executions/${queued.id}`);
    return ['success', 'failed'].includes(e.status) ? e : null;
  });
}

describe('runbook workflow targets', () => {
  it.each([
    ['another host', () => `${elsewhere.url}/webhook/ok`],
    ['the same host on another port', () => `${n8n.url.replace(/:\d+$/, ':1')}/webhook/ok`],
    ['credentials in the URL', () => n8n.url.replace('http://', 'http://user:pw@') + '/webhook/ok'],
    ['a protocol-relative path', () => `//${new URL(elsewhere.url).host}/webhook/ok`],
  ])('%s is a 400 naming body.webhook_url', async (_name, target) => {
    const res = await create(target());
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual(['body.webhook_url']);
  });

  it('a change of target to another host is refused too', async () => {
    const rb = await (await create('/webhook/ok')).json();
    const res = await api.request(`/api/v1/runbooks/${rb.id}`, { method: 'PATCH', json: { webhook_url: `${elsewhere.url}/x` } });
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0].path).toBe('body.webhook_url');
  });

  it('a path or a URL under AUTOMATION_URL is called there, with the key', async () => {
    for (const target of ['/webhook/ok', `${n8n.url}/webhook/ok`]) {
      const rb = await create(target);
      expect(rb.status).toBe(201);
      expect((await runToEnd((await rb.json()).id)).status).toBe('success');
    }
    const calls = n8n.requests.filter((r) => r.url === '/webhook/ok');
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.headers['x-n8n-api-key'] === 'automation-secret-key')).toBe(true);
  });

  it('a runbook stored earlier with a foreign target fails without any call, and the migration disables it', async () => {
    const [row] = await db()('sre_runbooks').insert({ name: 'legacy', webhook_url: `${elsewhere.url}/steal`, matchers: '[]', parameters: '{}', auto_trigger: true }).returning('*');
    const done = await runToEnd(row.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/automation system/);
    expect(elsewhere.requests).toHaveLength(0);

    await disableForeignRunbooks(db());
    const after = await getJson(`/api/v1/runbooks/${row.id}`);
    expect(after).toMatchObject({ enabled: false, auto_trigger: false });
    expect(after.description).toMatch(/not under AUTOMATION_URL/);
    expect((await getJson('/api/v1/runbooks?search=rb-')).items.every((r: { enabled: boolean }) => r.enabled)).toBe(true);
  });

  it('stored results are bounded and errors do not carry the upstream body', async () => {
    const big = await runToEnd((await (await create('/webhook/big')).json()).id);
    expect(big.status).toBe('success');
    expect(big.result).toMatchObject({ truncated: true });
    expect(JSON.stringify(big.result).length).toBeLessThan(1000);

    const broken = await runToEnd((await (await create('/webhook/broken')).json()).id);
    expect(broken.status).toBe('failed');
    expect(broken.error).toContain('404');
    expect(JSON.stringify(broken)).not.toContain('INTERNAL-DETAIL-7f3a');
  });
});
