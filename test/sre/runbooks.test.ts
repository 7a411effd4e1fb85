import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { refreshExecutions } from '../../shared/sre/runbooks/runbooks.js';
import { json, localServer } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

// A local server speaking n8n: a production webhook (/webhook/<path>) whose workflow answers with its
// execution id ("Respond to Webhook"), and the public API's GET /api/v1/executions/{id}.
let nextExecution = 100;
const executions = new Map<string, { status: string; finished: boolean }>();
const recorded: Array<{ id: string; workflowId: string; body: unknown }> = [];
const n8n = await localServer((req, res) => {
  if (req.method === 'POST' && req.url === '/webhook/restart-service') {
    const id = String(nextExecution++);
    executions.set(id, { status: 'running', finished: false });
    return json(res, 200, { executionId: id });
  }
  if (req.method === 'POST' && req.url === '/webhook/lost-answer') {
    // The workflow starts (n8n records the execution with the webhook body), but the answer is lost.
    const id = String(nextExecution++);
    executions.set(id, { status: 'running', finished: false });
    recorded.push({ id, workflowId: 'wf-lost', body: req.body });
    return json(res, 502, { message: 'Bad Gateway' });
  }
  if (req.method === 'GET' && req.url.startsWith('/api/v1/executions?')) {
    if (req.headers['x-n8n-api-key'] !== 'n8n-key') return json(res, 401, { message: 'unauthorized' });
    const q = new URL(req.url, 'http://n8n').searchParams;
    const data = recorded
      .filter((e) => e.workflowId === q.get('workflowId'))
      .map((e) => ({ id: Number(e.id), finished: false, mode: 'webhook', workflowId: e.workflowId, status: 'running', ...(q.get('includeData') === 'true' ? { data: { resultData: { runData: { Webhook: [{ data: { main: [[{ json: { body: e.body } }]] } }] } } } } : {}) }));
    return json(res, 200, { data, nextCursor: null });
  }
  if (req.method === 'POST' && req.url === '/webhook/fire-and-forget') return json(res, 200, { message: 'Workflow was started' });
  if (req.method === 'POST' && req.url === '/webhook/broken') return json(res, 404, { code: 404, message: 'The requested webhook "POST broken" is not registered.' });
  const m = /^\/api\/v1\/executions\/(\w+)$/.exec(req.url);
  if (req.method === 'GET' && m) {
    if (req.headers['x-n8n-api-key'] !== 'n8n-key') return json(res, 401, { message: 'unauthorized' });
    const e = executions.get(m[1]!);
    if (!e) return json(res, 404, { message: 'Not Found' });
    return json(res, 200, { id: Number(m[1]), finished: e.finished, mode: 'webhook', startedAt: new Date().toISOString(), stoppedAt: e.finished ? new Date().toISOString() : null, workflowId: 'wf1', status: e.status });
  }
  json(res, 404, { message: 'Not Found' });
});

process.env.AUTOMATION_URL = n8n.url;
process.env.AUTOMATION_API_KEY = 'n8n-key';
process.env.FLAP_THRESHOLD = '3';
process.env.FLAP_WINDOW = '600';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const post = (body: unknown) => api.request('/webhooks/alertmanager/default', { method: 'POST', json: body, auth: false });
// Each call is a new notification, so its body differs as a sender's would (a templated value): the
// same body again within ALERT_RETRY_WINDOW is the sender's retry and counts once.
let notification = 0;
const alert = (labels: Record<string, string>, status: 'firing' | 'resolved' = 'firing') => ({
  version: '4',
  status,
  alerts: [{ status, labels, annotations: { value: String(++notification) } }],
});
const getJson = async (path: string) => (await api.request(path)).json();
const createRunbook = async (body: Record<string, unknown>) => {
  const res = await api.request('/api/v1/runbooks', { method: 'POST', json: body });
  expect(res.status).toBe(201);
  return res.json();
};
const webhookCalls = (path: string) => n8n.requests.filter((r) => r.method === 'POST' && r.url === path);

describe('runbooks', () => {
  it('CRUD with validation of matchers and names', async () => {
    const rb = await createRunbook({ name: 'noop', webhook_url: `${n8n.url}/webhook/fire-and-forget`, matchers: [{ label: 'alertname', op: '=', value: 'Never' }], auto_trigger: false });
    expect(rb).toMatchObject({ name: 'noop', enabled: true, auto_trigger: false, timeout_seconds: 900 });
    expect((await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'noop', webhook_url: '/webhook/x' } })).status).toBe(409);
    const bad = await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'bad', webhook_url: 'not a url', matchers: [{ label: 'a', op: '=~', value: '(' }] } });
    expect(bad.status).toBe(400);
    const badRegex = await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'bad', webhook_url: '/webhook/x', matchers: [{ label: 'a', op: '=~', value: '(' }] } });
    expect((await badRegex.json()).errors[0].path).toBe('body.matchers.0.value');
    const patched = await (await api.request(`/api/v1/runbooks/${rb.id}`, { method: 'PATCH', json: { description: 'does nothing', enabled: false } })).json();
    expect(patched).toMatchObject({ description: 'does nothing', enabled: false });
    expect((await getJson('/api/v1/runbooks?enabled=false&search=noo')).items.map((r: any) => r.id)).toEqual([rb.id]);
    expect((await api.request(`/api/v1/runbooks/${rb.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api.request(`/api/v1/runbooks/${rb.id}`)).status).toBe(404);
  });

  it('a matching firing alert starts the runbook exactly once per alert instance; the refresh follows it to success', async () => {
    const rb = await createRunbook({
      name: 'restart checkout',
      webhook_url: `${n8n.url}/webhook/restart-service`,
      workflow_id: 'wf1',
      matchers: [{ label: 'alertname', value: 'ServiceDown' }, { label: 'service', op: '=~', value: 'check.*' }],
      parameters: { service: 'checkout' },
    });
    const labels = { alertname: 'ServiceDown', service: 'checkout', severity: 'critical' };
    // The same alert three times, in separate payloads and twice in one: one instance, one execution.
    await post(alert(labels));
    await post({ version: '4', status: 'firing', alerts: [{ status: 'firing', labels, annotations: {} }, { status: 'firing', labels, annotations: {} }] });
    await post(alert(labels));
    // A non-matching alert starts nothing.
    await post(alert({ alertname: 'ServiceDown', service: 'payments' }));
    const instance = await eventually(async () => {
      const a = (await getJson('/api/v1/alerts?label=service=checkout&label=alertname=ServiceDown')).items[0];
      return a?.occurrence_count === 4 ? a : null;
    });
    const started = await eventually(async () => {
      const p = await getJson(`/api/v1/runbooks/${rb.id}/executions`);
      return p.items[0]?.external_execution_id ? p : null;
    });
    expect(started.total).toBe(1);
    expect(started.items[0]).toMatchObject({ trigger: 'alert', alert_id: instance.id, status: 'running', external_execution_id: '100' });
    const calls = webhookCalls('/webhook/restart-service');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers['x-automation-api-key']).toBe('n8n-key');
    expect(calls[0]!.body).toMatchObject({ runbook: { id: rb.id, workflow_id: 'wf1' }, trigger: 'alert', parameters: { service: 'checkout' }, alert: { id: instance.id, labels } });

    // Still running in n8n: the refresh leaves it; then n8n reports success.
    expect((await refreshExecutions()).finished).toBe(0);
    executions.get('100')!.status = 'success';
    executions.get('100')!.finished = true;
    expect((await refreshExecutions()).finished).toBe(1);
    const done = await getJson(`/api/v1/runbooks/executions/${started.items[0].id}`);
    expect(done).toMatchObject({ status: 'success', finished_at: expect.any(String) });
    expect(done.history.map((h: any) => h.to)).toEqual(['queued', 'running', 'success']);
    const gets = n8n.requests.filter((r) => r.method === 'GET' && r.url === '/api/v1/executions/100');
    expect(gets.length).toBe(2);
    expect(gets[0]!.headers['x-n8n-api-key']).toBe('n8n-key');

    // Resolved and firing again: a new instance, so one more execution.
    await post(alert(labels, 'resolved'));
    await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=ServiceDown&label=service=checkout&status=resolved')).total === 1);
    await post(alert(labels));
    await eventually(async () => (await getJson(`/api/v1/runbooks/${rb.id}/executions`)).total === 2);
    // A marker alert for the same runbook, through the same path: a wrong extra call shows up before its call.
    const marker = { ...labels, service: 'checkout-marker' };
    await post(alert(marker));
    await eventually(async () => webhookCalls('/webhook/restart-service').some((c) => c.body?.alert?.labels?.service === 'checkout-marker'), 10_000, "the marker alert's webhook call");
    expect(webhookCalls('/webhook/restart-service').map((c) => c.body.alert.labels)).toEqual([labels, labels, marker]);
  });

  it('a flapping alert starts no runbook', async () => {
    const rb = await createRunbook({ name: 'flap guard', webhook_url: `${n8n.url}/webhook/fire-and-forget`, matchers: [{ label: 'alertname', value: 'FlapRun' }] });
    const labels = { alertname: 'FlapRun' };
    for (const [i, status] of (['firing', 'resolved', 'firing', 'resolved', 'firing'] as const).entries()) {
      await post(alert(labels, status));
      // Instances: one per firing; the newest carries the latest status.
      await eventually(async () => {
        const p = await getJson('/api/v1/alerts?label=alertname=FlapRun');
        return p.total === Math.floor(i / 2) + 1 && p.items[0].status === status;
      });
    }
    const current = await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=FlapRun&status=firing')).items[0]);
    expect(current.flapping).toBe(true);
    // A stable marker alert for the same runbook, automated after the flapping one would have been.
    await post(alert({ alertname: 'FlapRun', marker: 'yes' }));
    const marker = await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=FlapRun&label=marker=yes')).items[0], 10_000, 'the marker alert');
    const runs = await eventually(async () => {
      const p = await getJson(`/api/v1/runbooks/executions?runbook_id=${rb.id}`);
      return p.items.some((e: any) => e.alert_id === marker.id) && p;
    }, 10_000, "the marker alert's execution");
    // The first two (stable) instances ran it, then the marker; the flapping third did not.
    expect(runs.items.map((e: any) => e.alert_id)).not.toContain(current.id);
    expect(runs.total).toBe(3);
  });

  it('manual execution by API: success without an execution id, failed on a 4xx, 404 for unknown runbooks', async () => {
    const ok = await createRunbook({ name: 'manual ok', webhook_url: `${n8n.url}/webhook/fire-and-forget`, auto_trigger: false });
    const res = await api.request(`/api/v1/runbooks/${ok.id}/execute`, { method: 'POST', json: { input: { dry_run: true }, by: 'gina' } });
    expect(res.status).toBe(202);
    const queued = await res.json();
    expect(queued).toMatchObject({ status: 'queued', trigger: 'manual', triggered_by: 'gina' });
    const done = await eventually(async () => {
      const e = await getJson(`/api/v1/runbooks/executions/${queued.id}`);
      return e.status === 'success' ? e : null;
    });
    expect(done.result).toEqual({ message: 'Workflow was started' });
    expect(webhookCalls('/webhook/fire-and-forget').at(-1)!.body.parameters).toEqual({ dry_run: true });

    const broken = await createRunbook({ name: 'broken', webhook_url: `${n8n.url}/webhook/broken`, auto_trigger: false });
    const b = await (await api.request(`/api/v1/runbooks/${broken.id}/execute`, { method: 'POST', json: {} })).json();
    const failed = await eventually(async () => {
      const e = await getJson(`/api/v1/runbooks/executions/${b.id}`);
      return e.status === 'failed' ? e : null;
    });
    expect(failed.error).toContain('404');
    expect(failed.history.map((h: any) => h.to)).toEqual(['queued', 'running', 'failed']);
    expect((await getJson('/api/v1/runbooks/executions?status=failed')).total).toBe(1);
    expect((await api.request('/api/v1/runbooks/00000000-0000-4000-8000-000000000000/execute', { method: 'POST', json: {} })).status).toBe(404);
  });

  it('a running execution past its timeout becomes timed_out', async () => {
    const slow = await createRunbook({ name: 'slow', webhook_url: `${n8n.url}/webhook/restart-service`, auto_trigger: false, timeout_seconds: 1 });
    const e = await (await api.request(`/api/v1/runbooks/${slow.id}/execute`, { method: 'POST', json: {} })).json();
    await eventually(async () => (await getJson(`/api/v1/runbooks/executions/${e.id}`)).external_execution_id);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await refreshExecutions()).timedOut).toBe(1);
    expect((await getJson(`/api/v1/runbooks/executions/${e.id}`)).status).toBe('timed_out');
  });

  it('a workflow started by a call whose answer was lost is looked up on retry, not called again', async () => {
    const rb = await createRunbook({ name: 'lost-answer', webhook_url: `${n8n.url}/webhook/lost-answer`, workflow_id: 'wf-lost', auto_trigger: false });
    const res = await api.request(`/api/v1/runbooks/${rb.id}/execute`, { method: 'POST', json: {} });
    const started = await res.json();
    const done = await eventually(async () => {
      const e = await getJson(`/api/v1/runbooks/executions/${started.id}`);
      return e.external_execution_id ? e : null;
    }, 15_000);
    expect(webhookCalls('/webhook/lost-answer')).toHaveLength(1);
    expect(done.status).toBe('running');
    expect(done.external_execution_id).toBe(recorded.find((r) => JSON.stringify(r.body).includes(started.id))!.id);
  });
});
