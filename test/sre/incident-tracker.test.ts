import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { settleFlappingAlerts } from '../../shared/sre/alerts/ingest.js';
import { json, localServer } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

// A local server speaking the GitLab issues and notes API (PRIVATE-TOKEN): create, comment, close/reopen.
const issues = new Map<number, { state: 'opened' | 'closed'; notes: string[] }>();
const gitlab = await localServer((req, res) => {
  if (req.headers['private-token'] !== 'glpat-test') return json(res, 401, { message: '401 Unauthorized' });
  const issueUrl = (iid: number) => `${gitlab.url}/group/project/-/issues/${iid}`;
  if (req.method === 'POST' && req.url === '/api/v4/projects/42/issues') {
    const iid = issues.size + 1;
    issues.set(iid, { state: 'opened', notes: [] });
    return json(res, 201, { id: 1000 + iid, iid, project_id: 42, title: req.body.title, state: 'opened', web_url: issueUrl(iid) });
  }
  const m = /^\/api\/v4\/projects\/42\/issues\/(\d+)(\/notes)?$/.exec(req.url);
  const issue = m && issues.get(Number(m[1]));
  if (!issue) return json(res, 404, { message: '404 Issue Not Found' });
  if (req.method === 'POST' && m![2]) {
    if (!req.body?.body) return json(res, 400, { message: 'body is missing' });
    issue.notes.push(req.body.body);
    return json(res, 201, { id: 5000 + issue.notes.length, body: req.body.body, noteable_iid: Number(m![1]) });
  }
  if (req.method === 'PUT' && !m![2]) {
    if (req.body?.state_event === 'close') issue.state = 'closed';
    else if (req.body?.state_event === 'reopen') issue.state = 'opened';
    return json(res, 200, { id: 1000 + Number(m![1]), iid: Number(m![1]), project_id: 42, state: issue.state, web_url: issueUrl(Number(m![1])) });
  }
  json(res, 404, { message: '404 Not Found' });
});

process.env.ISSUE_TRACKER_URL = gitlab.url;
process.env.ISSUE_TRACKER_TOKEN = 'glpat-test';
process.env.ISSUE_TRACKER_PROJECT_ID = '42';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const getJson = async (path: string) => (await api.request(path)).json();
const act = (id: string, action: string, json: Record<string, unknown> = {}) => api.request(`/api/v1/incidents/${id}/${action}`, { method: 'POST', json });
const timeline = async (id: string, kind: string) => (await getJson(`/api/v1/incidents/${id}/timeline?kind=${kind}`)).items;
const postAlert = (labels: Record<string, string>) =>
  api.request('/webhooks/alertmanager/default', { method: 'POST', json: { version: '4', status: 'firing', alerts: [{ status: 'firing', labels, annotations: {} }] }, auth: false });

describe('incident edits and the tracker issue', () => {
  it('title, severity and assignee can be changed; each change is a timeline entry', async () => {
    const created = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Checkout slow', severity: 'warning' } })).json();
    const res = await api.request(`/api/v1/incidents/${created.id}`, { method: 'PATCH', json: { title: 'Checkout down', severity: 'critical', assignee: 'ana@example.com', by: 'lead@example.com' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ title: 'Checkout down', severity: 'critical', assignee: 'ana@example.com' });
    // Same values again write nothing; null unassigns.
    await api.request(`/api/v1/incidents/${created.id}`, { method: 'PATCH', json: { severity: 'critical', assignee: null } });
    const entries = await timeline(created.id, 'updated');
    expect(entries.map((e: { data: { field: string; from: unknown; to: unknown }; actor: string }) => [e.data.field, e.data.from, e.data.to, e.actor])).toEqual([
      ['title', 'Checkout slow', 'Checkout down', 'lead@example.com'],
      ['severity', 'warning', 'critical', 'lead@example.com'],
      ['assignee', null, 'ana@example.com', 'lead@example.com'],
      ['assignee', 'ana@example.com', null, 'api'],
    ]);
    const empty = await api.request(`/api/v1/incidents/${created.id}`, { method: 'PATCH', json: { by: 'x' } });
    expect(empty.status).toBe(400);
    expect((await api.request(`/api/v1/incidents/${created.id}`, { method: 'PATCH', json: { title: '' } })).status).toBe(400);
  });

  it('resolving comments on and closes the issue, reopening reopens it, closing closes it again', async () => {
    const created = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Queue backlog' } })).json();
    const withIssue = await eventually(async () => {
      const i = await getJson(`/api/v1/incidents/${created.id}`);
      return i.issue.iid ? i : null;
    });
    const issue = issues.get(withIssue.issue.iid)!;
    expect((await act(created.id, 'resolve', { by: 'ana@example.com', note: 'drained the queue' })).status).toBe(200);
    await eventually(async () => issue.state === 'closed' && issue.notes.length === 1);
    expect(issue.notes[0]).toBe('Incident resolved by ana@example.com: drained the queue');
    const reopened = await act(created.id, 'reopen', { by: 'bob@example.com' });
    expect(await reopened.json()).toMatchObject({ status: 'open', resolved_at: null });
    await eventually(async () => issue.state === 'opened' && issue.notes.length === 2);
    expect(issue.notes[1]).toBe('Incident reopened by bob@example.com.');
    await act(created.id, 'resolve');
    await act(created.id, 'close', { note: 'postmortem filed' });
    await eventually(async () => issue.state === 'closed' && issue.notes.length === 4);
    expect(issue.notes[3]).toBe('Incident closed by api: postmortem filed');
    await eventually(async () => (await timeline(created.id, 'ticket')).length === 5);
    expect((await timeline(created.id, 'ticket')).map((e: { message: string }) => e.message)).toEqual([
      `issue #${withIssue.issue.iid} created`,
      `issue #${withIssue.issue.iid} closed`,
      `issue #${withIssue.issue.iid} reopened`,
      `issue #${withIssue.issue.iid} closed`,
      `issue #${withIssue.issue.iid} closed`,
    ]);
    // Acknowledging does not touch the tracker; a closed incident can only be reopened.
    const refused = await act(created.id, 'acknowledge');
    expect(refused.status).toBe(409);
    expect((await refused.json()).allowed_next_states).toEqual(['open']);
  });

  it('out of the box a seeded rule opens incidents for critical alerts; it can be disabled', async () => {
    const rules = (await getJson('/api/v1/incidents/rules')).items;
    const seeded = rules.find((r: { name: string }) => r.name === 'critical alerts');
    expect(seeded).toMatchObject({ enabled: true, severities: ['critical'], matchers: [] });
    await postAlert({ alertname: 'NodeDown', severity: 'critical', instance: 'n1' });
    await postAlert({ alertname: 'NodeSlow', severity: 'warning', instance: 'n1' });
    const opened = await eventually(async () => (await getJson('/api/v1/incidents?label=alertname=NodeDown')).items[0]);
    expect(opened).toMatchObject({ origin: 'alert', severity: 'critical', rule_id: seeded.id });
    expect((await getJson('/api/v1/incidents?label=alertname=NodeSlow')).total).toBe(0);
    expect((await api.request(`/api/v1/incidents/rules/${seeded.id}`, { method: 'PATCH', json: { enabled: false } })).status).toBe(200);
    await postAlert({ alertname: 'DiskDead', severity: 'critical', instance: 'n2' });
    await eventually(async () => (await getJson('/api/v1/alerts?label=alertname=DiskDead')).total === 1);
    // Whether or not the ingest job's own round has run yet, this one leaves nothing pending.
    await settleFlappingAlerts();
    expect((await getJson('/api/v1/incidents?label=alertname=DiskDead')).total).toBe(0);
  });
});
