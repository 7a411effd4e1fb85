import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { settleFlappingAlerts } from '../../shared/sre/alerts/ingest.js';
import { json, localServer } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

// n8n's production webhook: a runbook execution is a POST here.
const n8n = await localServer((_req, res) => json(res, 200, { message: 'Workflow was started' }));
process.env.AUTOMATION_URL = n8n.url;

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
  const rule = await api.request('/api/v1/incidents/rules', { method: 'POST', json: { name: 'payments', matchers: [{ label: 'team', op: '=', value: 'payments' }], group_by: ['alertname', 'instance'] } });
  expect(rule.status).toBe(201);
  const runbook = await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'restart', webhook_url: `${n8n.url}/webhook/restart`, matchers: [{ label: 'team', op: '=', value: 'payments' }] } });
  expect(runbook.status).toBe(201);
});

const post = (labels: Record<string, string>) =>
  api.request('/webhooks/alertmanager/default', { method: 'POST', json: { version: '4', status: 'firing', alerts: [{ status: 'firing', labels, annotations: {} }] }, auth: false });
const getJson = async (path: string) => (await api.request(path)).json();
const silence = (json: Record<string, unknown>) => api.request('/api/v1/alerts/silences', { method: 'POST', json });
const inOneHour = () => new Date(Date.now() + 3600_000).toISOString();
const alertOf = (instance: string) => eventually(async () => (await getJson(`/api/v1/alerts?label=instance=${instance}`)).items[0]);
const incidentsOf = async (instance: string) => (await getJson(`/api/v1/incidents?label=instance=${instance}`)).total;
const runbookCalls = () => n8n.requests.length;

describe('silences', () => {
  it('a silenced alert is recorded and shown as silenced, opens no incident and runs no runbook; ending the silence lets it through', async () => {
    const created = await silence({
      matchers: [{ label: 'team', op: '=', value: 'payments' }, { label: 'instance', op: '=~', value: 'db-[0-9]+' }],
      ends_at: inOneHour(),
      created_by: 'oncall@example.com',
      comment: 'planned failover',
    });
    expect(created.status).toBe(201);
    const s = await created.json();
    expect(s).toMatchObject({ state: 'active', created_by: 'oncall@example.com', comment: 'planned failover', ended_by: null });

    const callsBefore = runbookCalls();
    await post({ alertname: 'DiskFull', team: 'payments', instance: 'db-1', severity: 'critical' });
    // Not silenced: the regex is anchored, so "db-1x" does not match.
    await post({ alertname: 'DiskFull', team: 'payments', instance: 'db-1x', severity: 'critical' });
    const silenced = await alertOf('db-1');
    expect(silenced).toMatchObject({ status: 'firing', silenced: true, silenced_by: [s.id] });
    await eventually(async () => (await incidentsOf('db-1x')) === 1);
    await settleFlappingAlerts();
    expect(await incidentsOf('db-1')).toBe(0);
    expect((await alertOf('db-1x')).silenced).toBe(false);
    expect((await getJson(`/api/v1/alerts?silenced=true&label=team=payments`)).items.map((a: { id: string }) => a.id)).toEqual([silenced.id]);
    expect((await getJson(`/api/v1/alerts/silences/${s.id}`)).silenced_alerts).toBe(1);
    // Only db-1x's runbook ran.
    await eventually(async () => runbookCalls() === callsBefore + 1);
    expect((await getJson('/api/v1/runbooks/executions?limit=100')).items.filter((e: { alert_id: string }) => e.alert_id === silenced.id)).toEqual([]);

    const ended = await api.request(`/api/v1/alerts/silences/${s.id}/expire`, { method: 'POST', json: { by: 'oncall@example.com' } });
    expect(await ended.json()).toMatchObject({ state: 'expired', ended_by: 'oncall@example.com' });
    expect((await alertOf('db-1')).silenced).toBe(false);
    // The next alerts tick automates the alert that still fires.
    await settleFlappingAlerts();
    expect(await incidentsOf('db-1')).toBe(1);
    await eventually(async () => runbookCalls() === callsBefore + 2);
    expect((await api.request(`/api/v1/alerts/silences/${s.id}/expire`, { method: 'POST', json: {} })).status).toBe(409);
  });

  it('a silence applies only within its time range and expires by itself', async () => {
    const later = await (await silence({
      matchers: [{ label: 'instance', op: '=', value: 'cache-1' }],
      starts_at: new Date(Date.now() + 600_000).toISOString(),
      ends_at: inOneHour(),
      created_by: 'a',
      comment: 'tonight',
    })).json();
    expect(later.state).toBe('pending');
    const short = await (await silence({ matchers: [{ label: 'instance', op: '=', value: 'cache-2' }], ends_at: new Date(Date.now() + 1500).toISOString(), created_by: 'a', comment: 'blip' })).json();
    expect(short.state).toBe('active');
    await post({ alertname: 'Evicting', team: 'payments', instance: 'cache-1' });
    await post({ alertname: 'Evicting', team: 'payments', instance: 'cache-2' });
    expect((await alertOf('cache-1')).silenced).toBe(false);
    expect((await alertOf('cache-2')).silenced).toBe(true);
    await eventually(async () => (await incidentsOf('cache-1')) === 1);
    expect(await incidentsOf('cache-2')).toBe(0);
    await eventually(async () => (await getJson(`/api/v1/alerts/silences/${short.id}`)).state === 'expired', 5000);
    await settleFlappingAlerts();
    expect(await incidentsOf('cache-2')).toBe(1);
    const states = (await getJson('/api/v1/alerts/silences?state=expired')).items.map((x: { id: string }) => x.id);
    expect(states).toContain(short.id);
    expect(states).not.toContain(later.id);
  });

  it('bad silences are a 400 naming each field', async () => {
    const res = await silence({ matchers: [], ends_at: 'tomorrow', created_by: '', comment: '' });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.comment', 'body.created_by', 'body.ends_at', 'body.matchers']);
    const everything = await silence({ matchers: [{ label: 'x', op: '=~', value: '.*' }], ends_at: inOneHour(), created_by: 'a', comment: 'b' });
    expect((await everything.json()).errors).toEqual([{ path: 'body.matchers', message: expect.stringContaining('every alert') }]);
    const past = await silence({ matchers: [{ label: 'x', op: '=', value: 'y' }], starts_at: new Date(Date.now() - 7200_000).toISOString(), ends_at: new Date(Date.now() - 3600_000).toISOString(), created_by: 'a', comment: 'b' });
    expect((await past.json()).errors).toEqual([{ path: 'body.ends_at', message: 'must be in the future' }]);
    const regex = await silence({ matchers: [{ label: 'x', op: '=~', value: '(' }], ends_at: inOneHour(), created_by: 'a', comment: 'b' });
    expect((await regex.json()).errors[0].path).toBe('body.matchers.0.value');
    expect((await api.request('/api/v1/alerts/silences/6f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10')).status).toBe(404);
  });
});
