/**
 * An assistant works an incident end to end through the `sre` tools over MCP (the official SDK
 * client, Streamable HTTP to /mcp): reads the alert and the incident, the affected entity's CMDB
 * neighbourhood and monitors, acknowledges, runs a runbook, notes, escalates. Each call on the
 * incident lands on its timeline as an agent action (tool, arguments digest, outcome).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHash } from 'node:crypto';
import { inputDigest } from '../../shared/tools.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json, localServer } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

// The runbook's workflow webhook and the escalation webhook.
const automation = await localServer((_req, res) => json(res, 200, { ok: true }));
const pager = await localServer((_req, res) => json(res, 200, { ok: true }));
process.env.ESCALATION_WEBHOOK_URL = `${pager.url}/escalations`;
// Runbook targets lie under the automation system (AUTOMATION_URL), the local server here.
process.env.AUTOMATION_URL = automation.url;

let api: Platform;
let mcp: Client;
beforeAll(async () => {
  api = await startPlatform();
  mcp = new Client({ name: 'sre-assistant-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': testApiKey } } }));
});
afterAll(() => mcp?.close());

async function call(name: string, args: Record<string, unknown>) {
  const result = await mcp.callTool({ name, arguments: args });
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  return { isError: !!result.isError, value: JSON.parse(text) };
}
async function ok(name: string, args: Record<string, unknown>) {
  const { isError, value } = await call(name, args);
  expect(isError, `${name}: ${JSON.stringify(value)}`).toBe(false);
  return value;
}

describe('sre tools over MCP', () => {
  it('are listed under executor sre with their input schemas', async () => {
    const { tools } = await mcp.listTools();
    const sre = tools.filter((t) => t.name.startsWith('sre_')).map((t) => t.name).sort();
    expect(sre).toEqual([
      'sre_acknowledge_alert', 'sre_acknowledge_incident', 'sre_add_timeline_note', 'sre_escalate_incident', 'sre_execute_runbook',
      'sre_get_alert', 'sre_get_entity', 'sre_get_incident', 'sre_get_runbook_execution', 'sre_list_alerts', 'sre_list_incidents', 'sre_list_runbooks',
    ]);
    expect(tools.find((t) => t.name === 'sre_escalate_incident')!.inputSchema).toMatchObject({ required: ['incident_id', 'reason'] });
    const listed = await (await api.request('/api/v1/tools?executor=sre')).json();
    expect(listed.tools).toHaveLength(12);
  });

  it('an assistant works an incident end to end; every call on it lands on its timeline as an agent action', async () => {
    // The world: a firing alert, an incident holding it, a container of a compose project, a runbook.
    const webhook = await api.request('/webhooks/alertmanager/default', {
      method: 'POST',
      auth: false,
      json: { version: '4', status: 'firing', alerts: [{ status: 'firing', labels: { alertname: 'ApiDown', service: 'api', severity: 'critical' }, annotations: { summary: 'api is down' } }] },
    });
    expect(webhook.status).toBeLessThan(300);
    const alerts = await eventually(async () => {
      const page = await (await api.request('/api/v1/alerts?label=alertname%3DApiDown')).json();
      return page.total === 1 ? page.items : null;
    });
    const created = await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'API down', severity: 'critical', alert_ids: [alerts[0].id] } });
    expect(created.status, await created.clone().text()).toBe(201);
    const incident = await created.json();
    const { createSource } = await import('../../shared/sre/discovery/sources.store.js');
    const { upsertSourceEntities } = await import('../../shared/sre/cmdb/entities.store.js');
    const { deriveRelationships } = await import('../../shared/sre/cmdb/relationships.store.js');
    const { readContainers } = await import('../../shared/sre/discovery/readers.js');
    const source = await createSource({ name: 'docker-test', kind: 'docker', address: 'tcp://127.0.0.1:1' });
    await upsertSourceEntities(
      source.id,
      new Date(),
      readContainers([{ Id: 'c1', Names: ['/shop-api-1'], Image: 'shop/api:1', State: 'exited', Status: 'Exited (1)', Labels: { 'com.docker.compose.project': 'shop', 'com.docker.compose.service': 'api' } }] as never),
    );
    await deriveRelationships();
    const runbook = await (await api.request('/api/v1/runbooks', { method: 'POST', json: { name: 'restart api', webhook_url: `${automation.url}/webhook/restart` } })).json();

    // The assistant's work.
    const firing = await ok('sre_list_alerts', { status: 'firing' });
    expect(firing.alerts.map((a: { id: string }) => a.id)).toContain(alerts[0].id);
    const open = await ok('sre_list_incidents', { status: 'open' });
    expect(open.incidents.map((i: { id: string }) => i.id)).toContain(incident.id);
    const detail = await ok('sre_get_incident', { incident_id: incident.id });
    expect(detail.alerts.map((a: { id: string }) => a.id)).toEqual([alerts[0].id]);
    const ack = await ok('sre_acknowledge_incident', { incident_id: incident.id, note: 'looking' });
    expect(ack.status).toBe('acknowledged');
    const alertAck = await ok('sre_acknowledge_alert', { alert_id: alerts[0].id });
    expect(alertAck.status).toBe('acknowledged');

    const { db } = await import('../../shared/db/index.js');
    const container = await db()('sre_entities').where({ type: 'container', name: 'shop-api-1' }).first();
    const entity = await ok('sre_get_entity', { entity_id: container.id });
    expect(entity.entity).toMatchObject({ name: 'shop-api-1', health: 'down' });
    expect(entity.neighbourhood.entities.map((e: { type: string; name: string }) => `${e.type}:${e.name}`)).toContain('compose_project:shop');
    expect(entity.entity.monitors).toEqual(expect.any(Array));

    const runbooks = await ok('sre_list_runbooks', { search: 'restart' });
    expect(runbooks.runbooks.map((r: { id: string }) => r.id)).toEqual([runbook.id]);
    const execution = await ok('sre_execute_runbook', { runbook_id: runbook.id, incident_id: incident.id, input: { service: 'api' } });
    expect(execution).toMatchObject({ runbook_id: runbook.id, incident_id: incident.id });
    await eventually(async () => (await ok('sre_get_runbook_execution', { execution_id: execution.id })).execution.status !== 'queued', 10_000, 'the runbook execution to start');
    await ok('sre_add_timeline_note', { incident_id: incident.id, message: 'container shop-api-1 exited; restarted it' });
    const escalated = await ok('sre_escalate_incident', { incident_id: incident.id, reason: 'still failing after restart' });
    expect(escalated.id).toBe(incident.id);
    await eventually(() => pager.requests.length > 0, 10_000, 'the escalation webhook call');

    // A refused call on the incident is recorded too, with its outcome.
    const refused = await call('sre_acknowledge_incident', { incident_id: incident.id });
    expect(refused.isError).toBe(true);

    const timeline = await (await api.request(`/api/v1/incidents/${incident.id}/timeline?limit=100`)).json();
    const actions = timeline.items.filter((e: { kind: string }) => e.kind === 'agent_action');
    const keyId = `key:${createHash('sha256').update(testApiKey).digest('hex').slice(0, 16)}`;
    expect(actions.map((a: { data: { tool: string; outcome: string } }) => `${a.data.tool}:${a.data.outcome}`).sort()).toEqual(
      [
        'sre_get_incident:ok', 'sre_acknowledge_incident:ok', 'sre_acknowledge_alert:ok', 'sre_execute_runbook:ok',
        'sre_add_timeline_note:ok', 'sre_escalate_incident:ok', 'sre_acknowledge_incident:error',
      ].sort(),
    );
    for (const a of actions) expect(a.actor).toBe(keyId);
    const note = actions.find((a: { data: { tool: string } }) => a.data.tool === 'sre_add_timeline_note');
    expect(note.data.arguments_sha256).toBe(inputDigest({ incident_id: incident.id, message: 'container shop-api-1 exited; restarted it' }));
    // The note itself, the acknowledgement and the escalation are on the timeline under the assistant's name.
    expect(timeline.items.some((e: { kind: string; message: string }) => e.kind === 'comment' && e.message.includes('shop-api-1'))).toBe(true);
    expect(timeline.items.some((e: { kind: string; actor: string }) => e.kind === 'escalation' && e.actor === keyId)).toBe(true);
    // Every call went through the gateway audit.
    const audit = await (await api.request('/api/v1/tools/calls?executor=sre&limit=100')).json();
    expect(audit.total).toBeGreaterThanOrEqual(12);
  });
});
