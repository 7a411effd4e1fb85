import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { alertFingerprint } from '../../shared/sre/alerts/fingerprint.js';
import { db } from '../../shared/db/index.js';
import { jobDefinitions } from '../../shared/queues.js';
import { alertmanagerPayload, normalizeAlerts } from '../../shared/sre/alerts/payloads.js';
import { fixture } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

process.env.ALERT_WEBHOOK_TOKEN = 'am-secret-token';
process.env.FLAP_THRESHOLD = '3';
process.env.FLAP_WINDOW = '600';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const bearer = { Authorization: 'Bearer am-secret-token' };
const post = (kind: string, body: unknown, headers: Record<string, string> = bearer, source = 'default') =>
  api.request(`/webhooks/${kind}/${source}`, { method: 'POST', json: body, headers, auth: false });

// Grafana's documented sample (webhook notifier page, Grafana 10/11 docs).
const grafanaSample = {
  receiver: 'My Super Webhook',
  status: 'firing',
  orgId: 1,
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'High memory usage', team: 'blue', zone: 'us-1' },
      annotations: { description: 'The system has high memory usage', runbook_url: 'https://myrunbook.com/runbook/1234', summary: 'This alert was triggered for zone us-1' },
      startsAt: '2021-10-12T09:51:03.157076+02:00',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'https://play.grafana.org/alerting/1afz29v7z/edit',
      fingerprint: 'c6eadffa33fcdf37',
      silenceURL: 'https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT2%2Cteam%3Dblue%2Czone%3Dus-1',
      dashboardURL: '',
      panelURL: '',
      values: { B: 44.23943737541908, C: 1 },
    },
    {
      status: 'firing',
      labels: { alertname: 'High CPU usage', team: 'blue', zone: 'eu-1' },
      annotations: { description: 'The system has high CPU usage', runbook_url: 'https://myrunbook.com/runbook/1234', summary: 'This alert was triggered for zone eu-1' },
      startsAt: '2021-10-12T09:56:03.157076+02:00',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'https://play.grafana.org/alerting/d1rdpdv7k/edit',
      fingerprint: 'bc97ff14869b13e3',
      silenceURL: 'https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT1%2Cteam%3Dblue%2Czone%3Deu-1',
      dashboardURL: '',
      panelURL: '',
      values: { B: 44.23943737541908, C: 1 },
    },
  ],
  groupLabels: {},
  commonLabels: { team: 'blue' },
  commonAnnotations: {},
  externalURL: 'https://play.grafana.org/',
  version: '1',
  groupKey: '{}:{}',
  truncatedAlerts: 0,
  title: '[FIRING:2]  (blue)',
  state: 'alerting',
  message: '**Firing**\n\nLabels:\n - alertname = T2\n - team = blue\n - zone = us-1',
};

async function alerts(query: string) {
  return (await (await api.request(`/api/v1/alerts?${query}`)).json()) as { items: any[]; total: number };
}

describe('fingerprint', () => {
  it("reproduces Alertmanager's own fingerprints of the captured payloads", () => {
    for (const name of ['webhook-v4-firing.json', 'webhook-v4-mixed-firing-resolved.json']) {
      for (const a of fixture(name).alerts) expect(alertFingerprint(a.labels)).toBe(a.fingerprint);
    }
  });

  it('is the FNV-1a offset basis for no labels and depends on every name and value', () => {
    expect(alertFingerprint({})).toBe('cbf29ce484222325');
    expect(alertFingerprint({ a: 'b' })).not.toBe(alertFingerprint({ a: 'c' }));
    expect(alertFingerprint({ ab: 'c' })).not.toBe(alertFingerprint({ a: 'bc' }));
    expect(alertFingerprint({ b: '1', a: '2' })).toBe(alertFingerprint({ a: '2', b: '1' }));
  });

  it('equals plain 64-bit FNV-1a over the UTF-8 bytes, non-ASCII values included', () => {
    // The textbook definition with BigInt, as the oracle for the limb arithmetic.
    const reference = (labels: Record<string, string>) => {
      let h = 0xcbf29ce484222325n;
      for (const name of Object.keys(labels).sort()) {
        for (const b of [...new TextEncoder().encode(name), 0xff, ...new TextEncoder().encode(labels[name]!), 0xff]) {
          h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
        }
      }
      return h.toString(16).padStart(16, '0');
    };
    const cases: Array<Record<string, string>> = [
      { alertname: 'DiskFull', device: '/dev/sda1', mountpoint: '/données', team: 'équipe-☁' },
      { alertname: 'x'.repeat(300), instance: '10.0.0.1:9100' },
      { z: '', a: '日本語', m: '\u0000\u00ff' },
    ];
    for (const labels of cases) expect(alertFingerprint(labels)).toBe(reference(labels));
  });
});

describe('webhooks', () => {
  it('accept the captured Alertmanager payload and deduplicate by its fingerprints', async () => {
    const res = await post('alertmanager', fixture('webhook-v4-firing.json'));
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ accepted: 2, source: 'alertmanager/default' });
    const page = await eventually(async () => {
      const p = await alerts('source=alertmanager/default&label=service=checkout');
      return p.total === 2 ? p : null;
    });
    expect(page.items.map((a) => a.fingerprint).sort()).toEqual(['35168abc2368c313', 'f7ca8b2ae37f4b50']);
    const web1 = page.items.find((a) => a.fingerprint === 'f7ca8b2ae37f4b50');
    expect(web1).toMatchObject({ status: 'firing', alertname: 'HighErrorRate', severity: 'critical', occurrence_count: 1, starts_at: '2026-11-21T23:34:58.000Z', ends_at: null });
    expect(web1.annotations.runbook_url).toBe('https://runbooks.example.com/high-error-rate');
  });

  it('handle each alert of a payload on its own: one firing repeat and one resolved', async () => {
    const res = await post('alertmanager', fixture('webhook-v4-mixed-firing-resolved.json'));
    expect(res.status).toBe(202);
    const resolved = await eventually(async () => (await alerts('fingerprint=35168abc2368c313&status=resolved')).items[0]);
    expect(resolved).toMatchObject({ status: 'resolved', resolved_by: 'sender:alertmanager/default', ends_at: '2026-11-21T23:35:06.000Z' });
    const firing = (await alerts('fingerprint=f7ca8b2ae37f4b50')).items;
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ status: 'firing', occurrence_count: 2 });
  });

  it("accept Grafana's documented sample, keeping its fingerprints and values", async () => {
    const res = await post('grafana', grafanaSample, { Authorization: `Basic ${Buffer.from('grafana:am-secret-token').toString('base64')}` });
    expect(res.status).toBe(202);
    const page = await eventually(async () => {
      const p = await alerts('source=grafana/default');
      return p.total === 2 ? p : null;
    });
    const mem = page.items.find((a) => a.alertname === 'High memory usage');
    expect(mem).toMatchObject({ fingerprint: 'c6eadffa33fcdf37', values: { B: 44.23943737541908, C: 1 }, labels: { team: 'blue', zone: 'us-1' } });
    expect(page.items.find((a) => a.alertname === 'High CPU usage').fingerprint).toBe('bc97ff14869b13e3');
  });

  it('compute the Alertmanager fingerprint when the sender sends none', async () => {
    const labels = { alertname: 'NoPrint', instance: 'x:1' };
    await post('alertmanager', { version: '4', status: 'firing', alerts: [{ status: 'firing', labels, annotations: {} }] });
    const a = await eventually(async () => (await alerts('label=alertname=NoPrint')).items[0]);
    expect(a.fingerprint).toBe(alertFingerprint(labels));
  });

  it('refuse a wrong or missing secret with 401, a bearer or basic password passes', async () => {
    const body = fixture('webhook-v4-firing.json');
    expect((await post('alertmanager', body, {})).status).toBe(401);
    expect((await post('alertmanager', body, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post('grafana', grafanaSample, { Authorization: `Basic ${Buffer.from('u:wrong').toString('base64')}` })).status).toBe(401);
    expect((await post('alertmanager', body, { Authorization: `Basic ${Buffer.from('x:am-secret-token').toString('base64')}` })).status).toBe(202);
  });

  it('refuse malformed payloads with 400 naming the fields, and unknown sources with 404', async () => {
    const bad = await post('alertmanager', { version: '4', status: 'firing', alerts: [{ status: 'burning', labels: { a: 1 } }] });
    expect(bad.status).toBe(400);
    const paths = (await bad.json()).errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['body.alerts.0.status', 'body.alerts.0.labels.a']));
    const notJson = await api.request('/webhooks/alertmanager/default', { method: 'POST', body: '{"alerts": [', headers: { ...bearer, 'Content-Type': 'application/json' }, auth: false });
    expect(notJson.status).toBe(400);
    expect((await post('alertmanager', { ...fixture('webhook-v4-firing.json'), version: '3' })).status).toBe(400);
    expect((await post('alertmanager', fixture('webhook-v4-firing.json'), bearer, 'nope')).status).toBe(404);
  });

  it('sources are managed by API, each with its own secret', async () => {
    const created = await api.request('/api/v1/alerts/sources', { method: 'POST', json: { kind: 'alertmanager', name: 'team-a', secret: 'team-a-secret' } });
    expect(created.status).toBe(201);
    const source = await created.json();
    expect(source).toMatchObject({ webhook_path: '/webhooks/alertmanager/team-a', has_own_secret: true });
    expect((await post('alertmanager', fixture('webhook-v4-firing.json'), bearer, 'team-a')).status).toBe(401);
    expect((await post('alertmanager', fixture('webhook-v4-firing.json'), { Authorization: 'Bearer team-a-secret' }, 'team-a')).status).toBe(202);
    await eventually(async () => (await alerts('source=alertmanager/team-a')).total === 2);
    expect((await api.request('/api/v1/alerts/sources', { method: 'POST', json: { kind: 'alertmanager', name: 'team-a' } })).status).toBe(409);
    expect((await api.request(`/api/v1/alerts/sources/${source.id}`, { method: 'PATCH', json: { enabled: false } })).status).toBe(200);
    expect((await post('alertmanager', fixture('webhook-v4-firing.json'), { Authorization: 'Bearer team-a-secret' }, 'team-a')).status).toBe(404);
    const list = await (await api.request('/api/v1/alerts/sources?kind=alertmanager')).json();
    expect(list.items.map((s: { name: string }) => s.name)).toEqual(['default', 'team-a']);
    const def = list.items.find((s: { name: string }) => s.name === 'default');
    expect((await api.request(`/api/v1/alerts/sources/${def.id}`, { method: 'DELETE' })).status).toBe(409);
  });
});

describe('ingest job', () => {
  const schema = jobDefinitions['sre.alerts-ingest'].schema;
  const job = (alerts: unknown[]) => ({
    payload_id: '0b7c9c43-6a4e-4d4f-9a4e-3f0b2f3a9d11',
    body_digest: 'a'.repeat(64),
    source_id: '6f1d7a2e-1c1b-4b7e-8a55-2b9d2f0f4c77',
    source: 'alertmanager/default',
    received_at: '2026-11-21T23:35:00.000Z',
    alerts,
  });

  it("carries the webhook's normalized alerts, and refuses an alert of another shape naming it", () => {
    const alerts = normalizeAlerts(alertmanagerPayload.parse(fixture('webhook-v4-mixed-firing-resolved.json')));
    expect(schema.parse(job(alerts)).alerts).toEqual(alerts);
    const bad = schema.safeParse(job([alerts[0], { ...alerts[1], labels: { a: 1 } }, { ...alerts[0], status: 'burning' }, { ...alerts[0], starts_at: 5 }]));
    expect(bad.error?.issues.map((i) => i.path.join('.'))).toEqual(['alerts.1', 'alerts.2', 'alerts.3']);
    expect(schema.safeParse(job([])).success).toBe(false);
    // Every API that enqueues this job sends the body's digest: a job without one is refused, not half-deduplicated.
    const { body_digest: _omitted, ...noDigest } = job(alerts);
    expect(schema.safeParse(noDigest).error?.issues.map((i) => i.path.join('.'))).toEqual(['body_digest']);
  });

  it('normalizes each timestamp to ISO 8601 in UTC, the same on every repeat, and the zero time to null', () => {
    const body = (startsAt: string) => alertmanagerPayload.parse({ version: '4', status: 'firing', alerts: [{ status: 'firing', labels: {}, startsAt, endsAt: '0001-01-01T00:00:00Z' }] });
    for (let i = 0; i < 3; i++) {
      expect(normalizeAlerts(body('2021-10-12T09:51:03.157076+02:00'))[0]).toMatchObject({ starts_at: '2021-10-12T07:51:03.157Z', ends_at: null });
    }
  });
});

describe('dedup', () => {
  it('a burst of 1,000 alerts over 50 fingerprints leaves 50 instances with the right counts', async () => {
    const payloads = Array.from({ length: 10 }, (_, p) => ({
      version: '4',
      status: 'firing',
      alerts: Array.from({ length: 100 }, (_, i) => {
        const n = (p * 100 + i) % 50;
        return { status: 'firing', labels: { alertname: 'Burst', shard: String(n) }, annotations: { seen: String(p) } };
      }),
    }));
    const answers = await Promise.all(payloads.map((body) => post('alertmanager', body)));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(202));
    const rows = await eventually(async () => {
      const r = await db()('sre_alert_instances').where('alertname', 'Burst').select('fingerprint', 'occurrence_count', 'status');
      return r.reduce((s, x) => s + x.occurrence_count, 0) === 1000 ? r : null;
    }, 20_000);
    expect(rows).toHaveLength(50);
    expect(rows.every((r) => r.occurrence_count === 20 && r.status === 'firing')).toBe(true);
    expect(new Set(rows.map((r) => r.fingerprint)).size).toBe(50);
    const history = await db()('sre_alert_state_history').join('sre_alert_instances as a', 'a.id', 'alert_id').where('a.alertname', 'Burst').count({ n: '*' }).first();
    expect(Number(history!.n)).toBe(50);
  });
});

describe('lifecycle', () => {
  // Each call is a new notification, so its body differs as a sender's would (a templated value): the
  // same body again within ALERT_RETRY_WINDOW is the sender's retry and counts once (alert-retries.test.ts).
  let notification = 0;
  const one = (status: 'firing' | 'resolved', name = 'Life') => ({
    version: '4',
    status,
    alerts: [
      {
        status,
        labels: { alertname: name, host: 'h1' },
        annotations: { value: String(++notification) },
        startsAt: '2026-11-21T10:00:00Z',
        endsAt: status === 'resolved' ? '2026-11-21T10:05:00Z' : '0001-01-01T00:00:00Z',
      },
    ],
  });

  it('firing → acknowledged → resolved by API, with a history row per move; illegal moves are 409', async () => {
    await post('alertmanager', one('firing'));
    const a = await eventually(async () => (await alerts('label=alertname=Life')).items[0]);
    const ack = await api.request(`/api/v1/alerts/${a.id}/acknowledge`, { method: 'POST', json: { by: 'alice' } });
    expect(ack.status).toBe(200);
    expect(await ack.json()).toMatchObject({ status: 'acknowledged', acknowledged_by: 'alice' });
    expect((await api.request(`/api/v1/alerts/${a.id}/acknowledge`, { method: 'POST', json: {} })).status).toBe(409);
    // A repeat firing while acknowledged updates the instance without reopening it.
    await post('alertmanager', one('firing'));
    await eventually(async () => (await (await api.request(`/api/v1/alerts/${a.id}`)).json()).occurrence_count === 2);
    expect((await (await api.request(`/api/v1/alerts/${a.id}`)).json()).status).toBe('acknowledged');
    const res = await api.request(`/api/v1/alerts/${a.id}/resolve`, { method: 'POST', json: { by: 'bob', note: 'fixed' } });
    expect(await res.json()).toMatchObject({ status: 'resolved', resolved_by: 'bob' });
    const conflict = await api.request(`/api/v1/alerts/${a.id}/resolve`, { method: 'POST', json: {} });
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ current_status: 'resolved', allowed_next_states: [] });
    const history = await (await api.request(`/api/v1/alerts/${a.id}/history`)).json();
    expect(history.items.map((h: any) => [h.from, h.to, h.by])).toEqual([
      [null, 'firing', 'sender:alertmanager/default'],
      ['firing', 'acknowledged', 'alice'],
      ['acknowledged', 'resolved', 'bob'],
    ]);
  });

  it("the sender's resolved status resolves; a firing after that opens a new instance", async () => {
    await post('alertmanager', one('firing', 'Again'));
    const first = await eventually(async () => (await alerts('label=alertname=Again')).items[0]);
    await post('alertmanager', one('resolved', 'Again'));
    await eventually(async () => (await alerts('label=alertname=Again&status=resolved')).total === 1);
    await post('alertmanager', one('firing', 'Again'));
    const page = await eventually(async () => {
      const p = await alerts('label=alertname=Again');
      return p.total === 2 ? p : null;
    });
    const second = page.items.find((a) => a.id !== first.id);
    expect(second).toMatchObject({ status: 'firing', occurrence_count: 1, fingerprint: first.fingerprint });
    expect((await alerts('label=alertname=Again&status=resolved')).items[0].id).toBe(first.id);
  });

  it('an alert changing state more than FLAP_THRESHOLD times within FLAP_WINDOW is flapping', async () => {
    // 3 is the threshold here: firing, resolved, firing (new instance), resolved → 4 changes.
    for (const status of ['firing', 'resolved', 'firing', 'resolved', 'firing'] as const) {
      await post('alertmanager', one(status, 'Flappy'));
      await eventually(async () => {
        const [row] = await db()('sre_alert_instances').where('alertname', 'Flappy').orderBy('created_at', 'desc').limit(1);
        return row?.status === status;
      });
    }
    const current = (await alerts('label=alertname=Flappy&status=firing')).items[0];
    expect(current.flapping).toBe(true);
    expect((await alerts('label=alertname=Flappy&flapping=true')).total).toBe(1);
    // A stable alert of the same source is not flapping.
    expect((await alerts('label=alertname=Burst&flapping=true')).total).toBe(0);
  });
});

describe('lists', () => {
  it('filter by status, severity, source, label and time range, and paginate', async () => {
    const all = await alerts('limit=500');
    const p1 = await alerts('limit=2&offset=0');
    const p2 = await alerts('limit=2&offset=2');
    expect(p1.total).toBe(all.total);
    expect(p1.items).toHaveLength(2);
    expect(p2.items[0].id).not.toBe(p1.items[0].id);
    expect((await alerts('severity=critical')).items.every((a) => a.severity === 'critical')).toBe(true);
    expect((await alerts('status=resolved,acknowledged')).items.every((a) => a.status !== 'firing')).toBe(true);
    expect((await alerts(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total).toBe(0);
    expect((await alerts(`until=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total).toBe(all.total);
    const bad = await api.request('/api/v1/alerts?status=bogus&limit=0&label=nolabel&since=yesterday');
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors.map((e: any) => e.path).sort()).toEqual(['query.label.0', 'query.limit', 'query.since', 'query.status.0']);
  });

  it('find text in the name, labels and annotations (LIKE wildcards taken literally)', async () => {
    const all = (await alerts('limit=500')).items;
    const named = all[0]!;
    const byName = await alerts(`q=${encodeURIComponent(named.alertname.toLowerCase())}`);
    expect(byName.items.map((a) => a.id)).toContain(named.id);
    expect(byName.items.every((a) => JSON.stringify([a.alertname, a.labels, a.annotations]).toLowerCase().includes(named.alertname.toLowerCase()))).toBe(true);
    const value = Object.entries(named.labels as Record<string, string>).find(([k]) => k !== 'alertname')![1];
    expect((await alerts(`q=${encodeURIComponent(value)}`)).items.map((a) => a.id)).toContain(named.id);
    expect((await alerts('q=%25')).total).toBe(all.filter((a) => JSON.stringify([a.alertname, a.labels, a.annotations]).includes('%')).length);
    expect((await alerts('q=no-such-text-anywhere')).total).toBe(0);
  });

  it('count alerts by status, and the live ones by severity', async () => {
    const all = (await alerts('limit=500')).items;
    const res = await api.request('/api/v1/alerts/counts');
    expect(res.status).toBe(200);
    const counts = await res.json();
    for (const status of ['firing', 'acknowledged', 'resolved'] as const) expect(counts.by_status[status]).toBe(all.filter((a) => a.status === status).length);
    const live = all.filter((a) => a.status !== 'resolved');
    const bySeverity: Record<string, number> = {};
    for (const a of live) bySeverity[a.severity] = (bySeverity[a.severity] ?? 0) + 1;
    expect(counts.by_severity).toEqual(bySeverity);
    expect((await api.request('/api/v1/alerts/counts', { auth: false })).status).toBe(401);
  });
});

describe('API reference', () => {
  it('documents every alerting route with its filters and errors', async () => {
    const doc = await (await api.request('/api/openapi.json')).json();
    const paths = Object.keys(doc.paths);
    for (const p of ['/webhooks/alertmanager/{source}', '/webhooks/grafana/{source}', '/api/v1/alerts', '/api/v1/alerts/{id}/acknowledge', '/api/v1/alerts/sources', '/api/v1/incidents', '/api/v1/incidents/{id}/timeline', '/api/v1/incidents/{id}/escalate', '/api/v1/incidents/rules', '/api/v1/runbooks', '/api/v1/runbooks/{id}/execute', '/api/v1/runbooks/executions']) {
      expect(paths).toContain(p);
    }
    const list = doc.paths['/api/v1/alerts'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['status', 'severity', 'source', 'label', 'since', 'until', 'limit', 'offset']));
    expect(Object.keys(doc.paths['/webhooks/alertmanager/{source}'].post.responses).sort()).toEqual(['202', '400', '401', '404', '413']);
    expect(Object.keys(doc.paths['/api/v1/incidents/{id}/close'].post.responses)).toContain('409');
  });
});
