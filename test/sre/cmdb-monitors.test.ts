// needs: prometheus
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { metricsEndpoint, startPrometheus, waitForScrapes } from './discovery-servers.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';

const metrics = await metricsEndpoint();
const closedPort = await freePort();
const prometheus = await startPrometheus({ app: [`127.0.0.1:${metrics.port}`], node: [`127.0.0.1:${closedPort}`] });

// A language model endpoint speaking the chat-completions wire format, always proposing these rules.
const proposals = [
  { alert: 'SlowScrape', expr: 'scrape_duration_seconds{job="app"} > 0.5', for: '5m', labels: { severity: 'warning' }, annotations: { summary: 'Scrapes of app are slow' }, rationale: 'slow exporters time out' },
  { alert: 'BrokenQuery', expr: 'sum(rate(up[5m]) by', labels: { severity: 'warning' } },
  { alert: 'not a name!', expr: 'up == 0' },
];
const llm = await useLocalLlm(() => ({ content: JSON.stringify({ rules: proposals }) }));

process.env.METRICS_URL = prometheus.url;
process.env.RULES_DIR = prometheus.rulesDir;
process.env.DISCOVERY_ENABLED = 'false';
process.env.MONITORS_AUTO_APPLY = 'true';
// Group proposals for new entities have their own test (monitor-proposals.test.ts).
process.env.MONITORS_MODEL_AUTO = 'false';
process.env.LLM_MODEL = 'test-model';

const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const api = await startPlatform();
const ruleFile = path.join(prometheus.rulesDir, 'switchboard-monitors.yml');

afterAll(async () => {
  await Promise.all([prometheus.stop(), metrics.close()]);
});

type Monitor = { id: string; entity_id: string; alert: string; status: string; last_error: string | null };
type Entity = { id: string; type: string; name: string };

const post = (p: string) => api.request(p, { method: 'POST' });
async function monitors(): Promise<Monitor[]> {
  return ((await (await api.request('/api/v1/cmdb/monitors?limit=500')).json()) as { items: Monitor[] }).items;
}
async function loadedRules(): Promise<Array<{ name: string; labels: Record<string, string>; alerts: Array<{ state: string; labels: Record<string, string> }> }>> {
  const body = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; rules: never[] }> } };
  return body.data.groups.filter((g) => g.name === 'switchboard-monitors').flatMap((g) => g.rules);
}

let target: Entity;
beforeAll(async () => {
  await waitForScrapes(prometheus.url, 3);
  const { run_id } = (await (await post('/api/v1/cmdb/discovery/trigger')).json()) as { run_id: string };
  await eventually(async () => ((await (await api.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()) as { status: string }).status === 'succeeded', 15_000, 'discovery');
  const list = (await (await api.request('/api/v1/cmdb/entities?type=scrape_target')).json()) as { items: Entity[] };
  target = list.items.find((e) => e.name === `127.0.0.1:${closedPort}`)!;
});

describe('monitor deployment', () => {
  it('deploy-all writes pending monitors to RULES_DIR, reloads Prometheus, and marks them deployed once /api/v1/rules lists them', async () => {
    const pending = await monitors();
    // One per scrape target and one per scrape job (app, node, prometheus).
    expect(pending.map((m) => `${m.alert}:${m.status}`).sort()).toEqual([
      ...Array(3).fill('ScrapeJobNoTargetUp:pending'),
      ...Array(3).fill('ScrapeTargetDown:pending'),
    ]);
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ deployed: 6, total: 6, removed: 0, removed_stale: 0, rule_file: ruleFile, checker: 'promtool' });
    const rules = await loadedRules();
    expect(rules.map((r) => r.labels.sre_monitor_id).sort()).toEqual(pending.map((m) => m.id).sort());
    expect((await monitors()).every((m) => m.status === 'deployed' && m.last_error === null)).toBe(true);
    // The deployed template really matches the down target: Prometheus evaluates it into an alert.
    const alert = await eventually(async () => {
      const rule = (await loadedRules()).find((r) => r.labels.sre_entity_id === target.id);
      return rule?.alerts.find((a) => a.labels.instance === target.name);
    }, 10_000, 'the ScrapeTargetDown alert');
    expect(alert.state).toBe('pending');
  });

  it('with nothing pending, deploy-all changes nothing', async () => {
    const before = await stat(ruleFile);
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(await res.json()).toMatchObject({ deployed: 0, total: 6 });
    expect((await stat(ruleFile)).mtimeMs).toBe(before.mtimeMs);
  });

  it('the language model proposes further rules; each is validated by promtool before it is stored', async () => {
    const res = await post(`/api/v1/cmdb/entities/${target.id}/recommendations/propose`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { stored: Array<{ alert: string; origin: string; status: string; rationale: string }>; rejected: Array<{ alert: string; error: string }> };
    expect(body.stored.map((r) => [r.alert, r.origin, r.status, r.rationale])).toEqual([['SlowScrape', 'llm', 'proposed', 'slow exporters time out']]);
    expect(body.rejected.map((r) => r.alert)).toEqual(['BrokenQuery', 'not a name!']);
    expect(body.rejected[0]!.error).toMatch(/parse error|unexpected/i);
    expect(body.rejected[1]!.error).toMatch(/^alert:/);
    const sent = llm.requests.at(-1)!.body;
    expect(sent.model).toBe('test-model');
    expect(sent.response_format).toEqual({ type: 'json_object' });
    expect(sent.messages.at(-1)!.content).toContain(target.name);
    expect(sent.messages.at(-1)!.content).toContain('ScrapeTargetDown');
    expect((await post('/api/v1/cmdb/entities/00000000-0000-4000-8000-000000000000/recommendations/propose')).status).toBe(404);
  });

  it('an applied proposal becomes a pending monitor and deploys with the others', async () => {
    const recs = (await (await api.request(`/api/v1/cmdb/recommendations?entity_id=${target.id}&status=proposed`)).json()) as { items: Array<{ id: string }> };
    const applied = await post(`/api/v1/cmdb/recommendations/${recs.items[0]!.id}/apply`);
    expect(applied.status).toBe(200);
    const monitor = (await applied.json()) as Monitor;
    expect(monitor).toMatchObject({ alert: 'SlowScrape', status: 'pending' });
    expect(((await (await post(`/api/v1/cmdb/recommendations/${recs.items[0]!.id}/apply`)).json()) as Monitor).id).toBe(monitor.id);
    expect((await post(`/api/v1/cmdb/recommendations/${recs.items[0]!.id}/dismiss`)).status).toBe(409);
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(await res.json()).toMatchObject({ deployed: 1, total: 7 });
    expect((await loadedRules()).map((r) => r.name).sort()).toEqual([...Array(3).fill('ScrapeJobNoTargetUp'), ...Array(3).fill('ScrapeTargetDown'), 'SlowScrape']);
  });

  it('a rule file promtool rejects is not deployed: the previous file stays and the monitors stay pending with the error', async () => {
    const previous = await readFile(ruleFile, 'utf8');
    const [bad] = await db()('sre_entity_monitors')
      .insert({ entity_id: target.id, alert: 'Broken', rule: JSON.stringify({ alert: 'Broken', expr: 'rate(up[5m]', labels: {}, annotations: {} }) })
      .returning('id');
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(res.status).toBe(502);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/promtool rejected/);
    expect(await readFile(ruleFile, 'utf8')).toBe(previous);
    const broken = (await monitors()).find((m) => m.id === bad.id)!;
    expect(broken.status).toBe('pending');
    expect(broken.last_error).toMatch(/promtool rejected/);
    expect(await loadedRules()).toHaveLength(7);
    await db()('sre_entity_monitors').where({ id: bad.id }).delete();
  });

  it('monitors can be disabled and removed; the next deploy takes their rules out and says how many', async () => {
    const all = await monitors();
    const slow = all.find((m) => m.alert === 'SlowScrape')!;
    const jobRule = all.find((m) => m.alert === 'ScrapeJobNoTargetUp')!;
    const disabled = await api.request(`/api/v1/cmdb/monitors/${jobRule.id}`, { method: 'PATCH', json: { enabled: false } });
    expect(await disabled.json()).toMatchObject({ status: 'disabled' });
    expect((await api.request(`/api/v1/cmdb/monitors/${slow.id}`, { method: 'DELETE' })).status).toBe(204);
    const recs = (await (await api.request(`/api/v1/cmdb/recommendations?entity_id=${target.id}`)).json()) as { items: Array<{ alert: string; status: string }> };
    expect(recs.items.find((r) => r.alert === 'SlowScrape')!.status).toBe('proposed');
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(await res.json()).toMatchObject({ deployed: 0, total: 5, removed: 2, removed_stale: 0 });
    expect((await loadedRules()).map((r) => r.labels.sre_monitor_id)).not.toContain(jobRule.id);
    expect(await loadedRules()).toHaveLength(5);
    // Enabled again: pending, and back in the file at the next deploy.
    expect(await (await api.request(`/api/v1/cmdb/monitors/${jobRule.id}`, { method: 'PATCH', json: { enabled: true } })).json()).toMatchObject({ status: 'pending' });
    expect(await (await post('/api/v1/cmdb/monitors/deploy-all')).json()).toMatchObject({ deployed: 1, total: 6, removed: 0 });
    expect((await api.request('/api/v1/cmdb/monitors/00000000-0000-4000-8000-000000000000', { method: 'DELETE' })).status).toBe(404);
  });

  it('monitors of entities gone stale are taken out at the next deploy, which says how many', async () => {
    const node = (await (await api.request('/api/v1/cmdb/entities?type=scrape_job&q=node')).json()) as { items: Entity[] };
    const job = node.items.find((e) => e.name === 'node')!;
    // As a discovery run marks an entity its source no longer reports.
    await db()('sre_entities').where({ id: job.id }).update({ stale: true, stale_since: db().fn.now() });
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(await res.json()).toMatchObject({ deployed: 0, total: 5, removed: 1, removed_stale: 1 });
    expect((await loadedRules()).map((r) => r.labels.sre_entity_id)).not.toContain(job.id);
    expect((await monitors()).filter((m) => m.entity_id === job.id)).toEqual([]);
    await db()('sre_entities').where({ id: job.id }).update({ stale: false, stale_since: null });
  });

  it('when Prometheus cannot reload, the previous rule file is restored and the monitors stay pending with the error', async () => {
    const previous = await readFile(ruleFile, 'utf8');
    const [added] = await db()('sre_entity_monitors')
      .insert({ entity_id: target.id, alert: 'TargetFlapping', rule: JSON.stringify({ alert: 'TargetFlapping', expr: `changes(up{instance="${target.name}"}[10m]) > 4`, labels: {}, annotations: {} }) })
      .returning('id');
    await prometheus.kill();
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    expect(res.status).toBe(502);
    expect(await readFile(ruleFile, 'utf8')).toBe(previous);
    const monitor = (await monitors()).find((m) => m.id === added.id)!;
    expect(monitor.status).toBe('pending');
    expect(monitor.last_error).toMatch(/unreachable/);
    expect((await monitors()).filter((m) => m.status === 'deployed')).toHaveLength(5);
  });
});
