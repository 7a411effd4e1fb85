import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { queue } from '../../shared/queues.js';
import { incidentsTick } from '../../shared/sre/incidents/incidents.js';
import { settleFlappingAlerts } from '../../shared/sre/alerts/ingest.js';
import { fixture, json, localServer } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

// A local server speaking the GitLab issues API (POST and GET /api/v4/projects/:id/issues with
// search/in=description, PRIVATE-TOKEN), with a switchable outage and a fault that creates the
// issue but loses the answer (a gateway error after GitLab accepted it).
let outage = false;
let loseAnswers = 0;
let iid = 0;
const issues: Array<{ id: number; iid: number; project_id: number; title: string; description: string; state: string; web_url: string }> = [];
const gitlab = await localServer((req, res) => {
  const url = new URL(req.url!, 'http://gitlab');
  if (url.pathname !== '/api/v4/projects/42/issues' || !['GET', 'POST'].includes(req.method!)) return json(res, 404, { message: '404 Not Found' });
  if (req.headers['private-token'] !== 'glpat-test') return json(res, 401, { message: '401 Unauthorized' });
  if (outage) return json(res, 503, { message: 'GitLab is not responding' });
  if (req.method === 'GET') {
    const search = url.searchParams.get('search') ?? '';
    const inDescription = url.searchParams.get('in') === 'description';
    return json(res, 200, issues.filter((i) => (inDescription ? i.description : `${i.title} ${i.description}`).includes(search)).reverse());
  }
  if (!req.body?.title) return json(res, 400, { error: 'title is missing' });
  iid += 1;
  const issue = { id: 1000 + iid, iid, project_id: 42, title: req.body.title, description: req.body.description ?? '', state: 'opened', web_url: `${gitlab.url}/group/project/-/issues/${iid}` };
  issues.push(issue);
  if (loseAnswers > 0) {
    loseAnswers -= 1;
    // 500, not 502: gitbeaker retries a 502 itself, which would POST the issue twice.
    return json(res, 500, { message: '500 Internal Server Error' });
  }
  json(res, 201, issue);
});
// The escalation notification webhook.
const pager = await localServer((_req, res) => json(res, 200, { ok: true }));

process.env.ISSUE_TRACKER_URL = gitlab.url;
process.env.ISSUE_TRACKER_TOKEN = 'glpat-test';
process.env.ISSUE_TRACKER_PROJECT_ID = '42';
process.env.ESCALATION_WEBHOOK_URL = `${pager.url}/escalations`;
process.env.ESCALATION_AFTER = '1';
process.env.FLAP_THRESHOLD = '2';
process.env.FLAP_WINDOW = '2';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
  // This file sets up its own rules; the seeded "critical alerts" rule (incident-tracker.test.ts) would open more incidents.
  await db()('sre_incident_rules').where({ name: 'critical alerts' }).delete();
});

const post = (body: unknown) => api.request('/webhooks/alertmanager/default', { method: 'POST', json: body, auth: false });
// Each call is a new notification, so its body differs as a sender's would (a templated value): the
// same body again within ALERT_RETRY_WINDOW is the sender's retry and counts once.
let notification = 0;
const firing = (labels: Record<string, string>, status: 'firing' | 'resolved' = 'firing') => ({
  version: '4',
  status,
  alerts: [{ status, labels, annotations: { summary: `${labels.alertname} summary`, value: String(++notification) } }],
});
const getJson = async (path: string) => (await api.request(path)).json();
const incidentsWhere = (label: string) => getJson(`/api/v1/incidents?label=${encodeURIComponent(label)}`);

describe('incident rules and grouping', () => {
  it('alerts with the same grouping key join the open incident; another key opens another; non-matching alerts open none', async () => {
    const rule = await api.request('/api/v1/incidents/rules', {
      method: 'POST',
      json: { name: 'checkout errors', matchers: [{ label: 'service', op: '=', value: 'checkout' }, { label: 'alertname', op: '=~', value: 'High.*' }], severities: ['critical'], group_by: ['alertname', 'service'] },
    });
    expect(rule.status).toBe(201);
    // Two alerts (web-1, web-2) of one group in the captured payload.
    await post(fixture('webhook-v4-firing.json'));
    const grouped = await eventually(async () => {
      const p = await incidentsWhere('service=checkout');
      return p.total === 1 && p.items[0].alert_count === 2 ? p.items[0] : null;
    });
    expect(grouped).toMatchObject({ origin: 'alert', status: 'open', severity: 'critical', labels: { alertname: 'HighErrorRate', service: 'checkout' } });
    // A third instance of the same key joins it.
    await post(firing({ alertname: 'HighErrorRate', service: 'checkout', severity: 'critical', instance: 'web-3:8080' }));
    await eventually(async () => (await getJson(`/api/v1/incidents/${grouped.id}`)).alert_count === 3);
    // Another key: another incident.
    await post(firing({ alertname: 'HighLatency', service: 'checkout', severity: 'critical' }));
    await eventually(async () => (await incidentsWhere('service=checkout')).total === 2);
    // Not matching (severity, or regex): none.
    await post(firing({ alertname: 'HighErrorRate', service: 'checkout', severity: 'info', instance: 'x' }));
    await post(firing({ alertname: 'DiskFull', service: 'checkout', severity: 'critical' }));
    await eventually(async () => (await db()('sre_alert_instances').whereIn('alertname', ['DiskFull']).orWhere('severity', 'info').whereNotNull('automation_at')).length === 2);
    expect((await incidentsWhere('service=checkout')).total).toBe(2);
    const timeline = await getJson(`/api/v1/incidents/${grouped.id}/timeline`);
    expect(timeline.items.map((t: any) => t.kind).filter((k: string) => k !== 'ticket')).toEqual(['created', 'alert_attached', 'alert_attached', 'alert_attached']);
    expect(timeline.items.filter((t: any) => t.kind === 'ticket')).toHaveLength(1);
    const alerts = await getJson(`/api/v1/incidents/${grouped.id}/alerts`);
    expect(alerts.items.map((a: any) => a.labels.instance).sort()).toEqual(['web-1:8080', 'web-2:8080', 'web-3:8080']);
  });

  it('after the incident is resolved, the same key opens a new incident', async () => {
    const [open] = (await incidentsWhere('alertname=HighLatency')).items;
    expect((await api.request(`/api/v1/incidents/${open.id}/resolve`, { method: 'POST', json: { by: 'carol' } })).status).toBe(200);
    await post(firing({ alertname: 'HighLatency', service: 'checkout', severity: 'critical', instance: 'new' }));
    const both = await eventually(async () => {
      const p = await incidentsWhere('alertname=HighLatency');
      return p.total === 2 ? p : null;
    });
    expect(both.items.map((i: any) => i.status).sort()).toEqual(['open', 'resolved']);
  });

  it('a flapping alert opens no incident until it has been stable for the window', async () => {
    await api.request('/api/v1/incidents/rules', { method: 'POST', json: { name: 'flappy', matchers: [{ label: 'alertname', value: 'Flappy' }], group_by: ['alertname'] } });
    const labels = { alertname: 'Flappy', severity: 'warning' };
    await post(firing(labels));
    const first = await eventually(async () => (await incidentsWhere('alertname=Flappy')).items[0]);
    await api.request(`/api/v1/incidents/${first.id}/resolve`, { method: 'POST', json: {} });
    await post(firing(labels, 'resolved'));
    await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=Flappy&status=resolved')).total === 1);
    await post(firing(labels));
    const flapping = await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=Flappy&status=firing')).items[0]);
    expect(flapping.flapping).toBe(true);
    expect((await settleFlappingAlerts()).settled).toBe(0);
    // A stable marker alert of the first test's rule, automated after the flapping one would have been.
    await post(firing({ alertname: 'HighMarker', service: 'checkout', severity: 'critical' }));
    await eventually(async () => (await incidentsWhere('alertname=HighMarker')).total === 1, 10_000, "the marker alert's incident");
    expect((await incidentsWhere('alertname=Flappy')).total).toBe(1);
    // Stable for the window (2 s): the tick clears flapping and the alert now opens its incident.
    await new Promise((r) => setTimeout(r, 2100));
    const settled = await settleFlappingAlerts();
    expect(settled.settled).toBe(1);
    expect(settled.automation.incidents).toHaveLength(1);
    expect((await getJson(`/api/v1/alerts/${flapping.id}`)).flapping).toBe(false);
    expect((await incidentsWhere('alertname=Flappy')).total).toBe(2);
  });
});

describe('rule lists', () => {
  it('paginate and filter', async () => {
    const all = await getJson('/api/v1/incidents/rules?limit=500');
    expect(all.items.map((r: any) => r.name)).toEqual(['checkout errors', 'flappy']);
    const second = await getJson('/api/v1/incidents/rules?limit=1&offset=1');
    expect(second).toMatchObject({ total: 2, limit: 1, offset: 1, items: [{ name: 'flappy' }] });
    expect((await getJson('/api/v1/incidents/rules?enabled=false')).total).toBe(0);
  });
});

describe('issue tracker', () => {
  it('a tracker outage neither blocks nor loses the incident; the issue is created when it recovers', async () => {
    outage = true;
    const before = gitlab.requests.length;
    const res = await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Checkout down', severity: 'critical', description: 'all 5xx', by: 'dave' } });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toMatchObject({ status: 'open', origin: 'manual', issue: { status: 'pending', iid: null } });
    await eventually(async () => gitlab.requests.length - before >= 2, 10_000);
    const during = await getJson(`/api/v1/incidents/${created.id}`);
    expect(during.issue).toMatchObject({ status: 'pending', iid: null, error: expect.stringContaining('503') });
    outage = false;
    const linked = await eventually(async () => {
      const i = await getJson(`/api/v1/incidents/${created.id}`);
      return i.issue.status === 'created' ? i : null;
    }, 15_000);
    const sent = gitlab.requests.filter((r) => r.body?.title === '[critical] Checkout down');
    expect(linked.issue).toEqual({ status: 'created', error: null, project_id: '42', iid: expect.any(Number), web_url: `${gitlab.url}/group/project/-/issues/${linked.issue.iid}` });
    // Retried through the outage (a retry looks the issue up first, then creates it), and created once.
    expect(gitlab.requests.length - before).toBeGreaterThanOrEqual(3);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(issues.filter((i) => i.description.includes(created.id))).toHaveLength(1);
    expect(sent.at(-1)!.body.description).toContain('all 5xx');
    expect(sent.at(-1)!.headers['private-token']).toBe('glpat-test');
    const timeline = await getJson(`/api/v1/incidents/${created.id}/timeline?kind=ticket`);
    expect(timeline.items).toHaveLength(1);
    expect(timeline.items[0].data).toMatchObject({ iid: linked.issue.iid });
  });
});

describe('tracker issues at most once', () => {
  it('an issue GitLab created although its answer was lost is found by the retry, not created again', async () => {
    loseAnswers = 1;
    const res = await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Lost answer', severity: 'major', description: 'gateway error after accept', by: 'erin' } });
    expect(res.status).toBe(201);
    const created = await res.json();
    const linked = await eventually(async () => {
      const i = await getJson(`/api/v1/incidents/${created.id}`);
      return i.issue.status === 'created' ? i : null;
    }, 15_000);
    const mine = issues.filter((i) => i.description.includes(created.id));
    expect(mine).toHaveLength(1);
    expect(linked.issue.iid).toBe(mine[0]!.iid);
    expect(gitlab.requests.filter((r) => r.method === 'GET' && r.url?.includes('search='))).not.toHaveLength(0);
  });

  it('the tick does not queue a second ticket job while the first still retries', async () => {
    outage = true;
    try {
      const res = await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Still retrying', severity: 'minor', description: 'x', by: 'erin' } });
      expect(res.status).toBe(201);
      const created = await res.json();
      await db()('sre_incidents').where({ id: created.id }).update({ created_at: db().raw(`now() - interval '10 minutes'`) });
      await incidentsTick(new Date().toISOString());
      await incidentsTick(new Date(Date.now() + 15_000).toISOString());
      const jobs = await queue('sre').getJobs(['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed']);
      expect(jobs.filter((j) => j.name === 'sre.incident-ticket' && j.data.incident_id === created.id)).toHaveLength(1);
    } finally {
      outage = false;
    }
  });
});

describe('incident lifecycle', () => {
  it('open → acknowledged → resolved → closed, 409 otherwise; comments and agent actions on the timeline', async () => {
    const inc = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Manual', labels: { team: 'sre' } } })).json();
    expect((await api.request(`/api/v1/incidents/${inc.id}/close`, { method: 'POST', json: {} })).status).toBe(409);
    expect((await (await api.request(`/api/v1/incidents/${inc.id}/acknowledge`, { method: 'POST', json: { by: 'erin' } })).json()).status).toBe('acknowledged');
    await api.request(`/api/v1/incidents/${inc.id}/timeline`, { method: 'POST', json: { kind: 'agent_action', actor: 'agent:sre-bot', message: 'restarted checkout', data: { tool: 'docker.restart' } } });
    await api.request(`/api/v1/incidents/${inc.id}/timeline`, { method: 'POST', json: { actor: 'erin', message: 'looks better' } });
    expect((await (await api.request(`/api/v1/incidents/${inc.id}/resolve`, { method: 'POST', json: {} })).json()).status).toBe('resolved');
    const closed = await (await api.request(`/api/v1/incidents/${inc.id}/close`, { method: 'POST', json: {} })).json();
    expect(closed).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
    const conflict = await api.request(`/api/v1/incidents/${inc.id}/acknowledge`, { method: 'POST', json: {} });
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).allowed_next_states).toEqual(['open']);
    const timeline = await getJson(`/api/v1/incidents/${inc.id}/timeline`);
    expect(timeline.items.map((t: any) => t.kind).filter((k: string) => k !== 'ticket')).toEqual(['created', 'status_changed', 'agent_action', 'comment', 'status_changed', 'status_changed']);
    expect((await getJson('/api/v1/incidents?status=closed&label=team=sre')).total).toBe(1);
    expect((await getJson('/api/v1/incidents?source=manual&severity=nope')).total).toBe(0);
    expect((await api.request('/api/v1/incidents/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('escalation by API and automatically after ESCALATION_AFTER unacknowledged, recorded and sent to the webhook', async () => {
    const inc = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Escalate me' } })).json();
    const escalated = await (await api.request(`/api/v1/incidents/${inc.id}/escalate`, { method: 'POST', json: { by: 'frank', reason: 'need DBA' } })).json();
    expect(escalated.escalated_at).not.toBeNull();
    const sent = await eventually(async () => pager.requests.find((r) => r.body?.incident?.id === inc.id));
    expect(sent).toMatchObject({ method: 'POST', url: '/escalations', body: { event: 'incident.escalated', reason: 'need DBA', escalated_by: 'frank' } });

    const quiet = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Nobody looks' } })).json();
    const acked = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Someone looks' } })).json();
    await api.request(`/api/v1/incidents/${acked.id}/acknowledge`, { method: 'POST', json: {} });
    await new Promise((r) => setTimeout(r, 1100));
    await incidentsTick(new Date().toISOString());
    const auto = await eventually(async () => pager.requests.find((r) => r.body?.incident?.id === quiet.id));
    expect(auto.body).toMatchObject({ escalated_by: 'system:escalation' });
    expect((await getJson(`/api/v1/incidents/${acked.id}`)).escalated_at).toBeNull();
    // Once: a second tick does not escalate again.
    await incidentsTick(new Date().toISOString());
    const kinds = (await getJson(`/api/v1/incidents/${quiet.id}/timeline?kind=escalation`)).items;
    expect(kinds).toHaveLength(1);
    expect(kinds[0].actor).toBe('system:escalation');
  });
});
