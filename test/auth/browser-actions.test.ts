/**
 * A person signed in through the embedded provider acting on the SRE API: actions recorded under
 * their name, and the live SRE event stream (a new firing reaches an open stream within 1 s).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, devAccounts, type SignedIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribeUrl } from '../helpers/sse.js';
import { db } from '../../shared/db/index.js';
import { fixture } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import type { SreEvent } from '../../shared/sre/events.js';

process.env.ALERT_WEBHOOK_TOKEN = 'am-secret-token';
// Runbook targets lie under the automation system (nothing answers there: the executions fail, which is enough here).
process.env.AUTOMATION_URL = 'http://127.0.0.1:9';

let app: Platform;
let sre: SignedIn;

beforeAll(async () => {
  const idp = await startIdentity();
  app = await startPlatform({ port: idp.appPort });
  sre = await signIn(app.url, 'sre');
});

/** An Alertmanager firing with a unique alertname, posted to the default source. */
async function fire(alertname: string) {
  const body = fixture('webhook-v4-firing.json');
  body.alerts = [{ ...body.alerts[0], labels: { ...body.alerts[0].labels, alertname } }];
  body.groupLabels = { alertname };
  const res = await app.request('/webhooks/alertmanager/default', { method: 'POST', json: body, headers: { Authorization: 'Bearer am-secret-token' }, auth: false });
  expect(res.status).toBe(202);
}

async function alertNamed(alertname: string) {
  return eventually(async () => (await db()('sre_alert_instances').whereRaw("labels->>'alertname' = ?", [alertname]).first()) as { id: string } | undefined);
}

describe('actions in the browser', () => {
  it('acknowledging an alert records the person in the history, whatever "by" says', async () => {
    await fire('BrowserAck');
    const alert = await alertNamed('BrowserAck');
    const res = await sre.request(`/api/v1/alerts/${alert.id}/acknowledge`, { method: 'POST', json: { by: 'someone-else', note: 'looking' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'acknowledged', acknowledged_by: devAccounts.sre.name });
    const history = await db()('sre_alert_state_history').where({ alert_id: alert.id, to_status: 'acknowledged' });
    expect(history.map((h: { actor: string }) => h.actor)).toEqual([devAccounts.sre.name]);
    // An API key keeps today's behaviour: the caller's "by".
    const resolved = await app.request(`/api/v1/alerts/${alert.id}/resolve`, { method: 'POST', json: { by: 'agent:triage' } });
    expect((await resolved.json()).resolved_by).toBe('agent:triage');
  });

  it('incident timeline entries and runbook executions carry the person', async () => {
    const created = await sre.request('/api/v1/incidents', { method: 'POST', json: { title: 'db slow' } });
    const incident = await created.json();
    expect(incident.created_by).toBe(devAccounts.sre.name);
    expect((await sre.request(`/api/v1/incidents/${incident.id}/timeline`, { method: 'POST', json: { message: 'checking replicas' } })).status).toBe(201);
    expect((await sre.request(`/api/v1/incidents/${incident.id}/acknowledge`, { method: 'POST', json: {} })).status).toBe(200);
    // An edit is recorded under the person too, whatever "by" says.
    const edited = await sre.request(`/api/v1/incidents/${incident.id}`, { method: 'PATCH', json: { severity: 'critical', by: 'someone-else' } });
    expect(edited.status).toBe(200);
    expect((await sre.request(`/api/v1/incidents/${incident.id}/escalate`, { method: 'POST', json: { reason: 'need the DBA' } })).status).toBe(200);
    const timeline = await (await sre.request(`/api/v1/incidents/${incident.id}/timeline`)).json();
    const byKind = Object.fromEntries(timeline.items.map((t: { kind: string; actor: string }) => [t.kind, t.actor]));
    expect(byKind).toMatchObject({ created: devAccounts.sre.name, comment: devAccounts.sre.name, status_changed: devAccounts.sre.name, updated: devAccounts.sre.name, escalation: devAccounts.sre.name });
    expect(timeline.items.some((t: { actor: string }) => t.actor === 'someone-else')).toBe(false);
    // With an API key, "by" names the caller, as for the other incident actions.
    await app.request(`/api/v1/incidents/${incident.id}`, { method: 'PATCH', json: { assignee: 'dba@example.com', by: 'agent:triage' } });
    const afterKey = await (await sre.request(`/api/v1/incidents/${incident.id}/timeline?kind=updated`)).json();
    expect(afterKey.items.map((t: { actor: string; data: { field: string } }) => [t.data.field, t.actor])).toEqual([['severity', devAccounts.sre.name], ['assignee', 'agent:triage']]);
    // With an API key the actor stays required.
    const noActor = await app.request(`/api/v1/incidents/${incident.id}/timeline`, { method: 'POST', json: { message: 'x' } });
    expect(noActor.status).toBe(400);
    expect((await noActor.json()).errors[0].path).toBe('body.actor');

    const runbook = await (
      await sre.request('/api/v1/runbooks', { method: 'POST', json: { name: 'restart', workflow_id: 'wf-1', webhook_url: '/webhook/restart', auto_trigger: false } })
    ).json();
    expect(runbook.id, JSON.stringify(runbook)).toBeTruthy();
    const execution = await sre.request(`/api/v1/runbooks/${runbook.id}/execute`, { method: 'POST', json: {} });
    expect(execution.status).toBe(202);
    expect((await execution.json()).triggered_by).toBe(devAccounts.sre.name);
  });
});

describe('live SRE events', () => {
  const open = (headers: Record<string, string>, query = '') =>
    subscribeUrl<SreEvent>(`${app.url}/api/v1/sre/events${query}`, headers, (e) => [e.type, e.data]);

  it('delivers a new firing to an open stream within 1 s', async () => {
    const stream = await open({ Cookie: sre.cookie });
    try {
      const sent = Date.now();
      await fire('LiveFiring');
      const event = await stream.next((e) => e.type === 'alert.fired' && e.data.opened === 1, 5_000);
      const latency = stream.received[stream.events.indexOf(event)]! - sent;
      console.log(`new firing reached the SSE stream in ${latency} ms`);
      expect(latency).toBeLessThan(1000);
      expect(event.data.source).toBe('alertmanager/default');
      const alert = await alertNamed('LiveFiring');
      await sre.request(`/api/v1/alerts/${alert.id}/acknowledge`, { method: 'POST', json: {} });
      const changed = await stream.next((e) => e.type === 'alert.changed' && e.data.id === alert.id);
      expect(changed.data).toMatchObject({ status: 'acknowledged', by: devAccounts.sre.name });
    } finally {
      stream.close();
    }
  });

  it('delivers discovery runs and runbook executions started in the browser', async () => {
    const stream = await open({ Cookie: sre.cookie }, '?types=discovery.started,discovery.finished,runbook_execution.changed');
    try {
      const trigger = await sre.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' });
      expect(trigger.status).toBe(202);
      const { run_id } = await trigger.json();
      expect((await stream.next((e) => e.type === 'discovery.started' && e.data.run_id === run_id)).data.trigger).toBe('manual');
      const finished = await stream.next((e) => e.type === 'discovery.finished' && e.data.run_id === run_id);
      expect(finished.data.status).toEqual((await (await sre.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()).status);

      const runbook = await (await sre.request('/api/v1/runbooks', { method: 'POST', json: { name: 'drain', webhook_url: '/webhook/drain', auto_trigger: false } })).json();
      const execution = await (await sre.request(`/api/v1/runbooks/${runbook.id}/execute`, { method: 'POST', json: {} })).json();
      const queued = await stream.next((e) => e.type === 'runbook_execution.changed' && e.data.id === execution.id);
      expect(queued.data).toMatchObject({ status: 'queued', runbook_id: runbook.id, by: devAccounts.sre.name });
      // The worker picks it up: queued → running is the next change.
      expect((await stream.next((e) => e.type === 'runbook_execution.changed' && e.data.id === execution.id && e.data.status === 'running')).data.from).toBe('queued');
    } finally {
      stream.close();
    }
  });

  it('filters by type, serves API keys too, and refuses portal users and strangers', async () => {
    const stream = await open({ 'X-API-Key': 'test-key' }, '?types=incident.opened');
    const everything = await open({ 'X-API-Key': 'test-key' });
    try {
      await app.request('/api/v1/incidents', { method: 'POST', json: { title: 'streamed' } });
      const opened = await stream.next((e) => e.type === 'incident.opened' && e.data.title === 'streamed');
      expect(opened.data.by).toBe('api');
      // Another kind of event reaches the unfiltered stream; an incident opened after it reaches the
      // filtered one, which (one bus subscriber per process, so in publish order) would have had it first.
      expect((await app.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).status).toBe(202);
      await everything.next((e) => e.type === 'discovery.started');
      await app.request('/api/v1/incidents', { method: 'POST', json: { title: 'after discovery' } });
      await stream.next((e) => e.type === 'incident.opened' && e.data.title === 'after discovery');
      expect(stream.events.map((e) => e.type)).toEqual(['incident.opened', 'incident.opened']);
    } finally {
      stream.close();
      everything.close();
    }
    const user = await signIn(app.url, 'user');
    expect((await user.request('/api/v1/sre/events')).status).toBe(403);
    expect((await app.request('/api/v1/sre/events', { auth: false })).status).toBe(401);
    expect((await app.request('/api/v1/sre/events?types=nope')).status).toBe(400);
  });
});
