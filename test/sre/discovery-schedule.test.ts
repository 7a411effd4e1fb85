import { afterAll, describe, expect, it } from 'vitest';

process.env.DISCOVERY_ENABLED = 'true';
process.env.DISCOVERY_INTERVAL = '2';
process.env.MONITORS_AUTO_APPLY = 'false';
process.env.LLM_PROVIDER = 'none';
delete process.env.METRICS_URL;
// The local Traefik API server listens on loopback, which an address set through the API may only use when allowed.
process.env.DISCOVERY_ALLOWED_TARGETS = '127.0.0.1';

const { startPlatform } = await import('../helpers/platform.js');
const { startScheduler } = await import('../../workers/scheduler.js');
const { schedules } = await import('../../workers/schedules.js');
const { queue } = await import('../../shared/queues.js');
const { db } = await import('../../shared/db/index.js');
const { discoveryCron } = await import('../../shared/sre/discovery/schedule.js');
const { traefikApiServer } = await import('./discovery-servers.js');
const { eventually } = await import('../helpers/eventually.js');

const api = await startPlatform();
const stops: Array<() => void> = [];
const traefik = await traefikApiServer({
  routers: [{ name: 'blog@file', provider: 'file', rule: 'Host(`blog.test`)', service: 'blog', status: 'enabled' }],
  services: [{ name: 'blog@file', provider: 'file', status: 'enabled', loadBalancer: { servers: [{ url: 'http://10.1.1.1:80' }] } }],
});
afterAll(async () => {
  stops.forEach((stop) => stop());
  await traefik.close();
});

describe('scheduled discovery', () => {
  it('the tick fires often enough for every interval and no more', () => {
    expect(discoveryCron(300)).toBe('0 * * * * *');
    expect(discoveryCron(2)).toBe('*/2 * * * * *');
    expect(discoveryCron(90)).toBe('*/30 * * * * *');
    expect(discoveryCron(45)).toBe('*/15 * * * * *');
  });

  it('several schedulers alive give exactly one run per interval', async () => {
    const scheduled = () => db()('sre_discovery_runs').where({ trigger: 'schedule' }).orderBy('slot');
    const started = Date.now();
    // Three worker processes' schedulers, ticking at once, for three slots.
    for (let i = 0; i < 3; i++) stops.push(startScheduler(schedules().filter((s) => s.job === 'discovery.run')));
    await eventually(async () => (await scheduled()).length >= 3, 15_000, 'three scheduled discovery runs');
    stops.forEach((stop) => stop());
    const elapsedSlots = (Date.now() - started) / 2000;
    // A marker through the same queue (a manual run, once no run holds the one-run-at-a-time slot):
    // once it has run, every tick enqueued before it has too.
    await eventually(async () => (await db()('sre_discovery_runs').where({ status: 'running' }).first()) === undefined, 10_000, 'runs to finish');
    const marker = (await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json()) as { run_id: string };
    await eventually(async () => (await db()('sre_discovery_runs').where({ id: marker.run_id }).first())?.status === 'succeeded', 15_000, 'the marker run');
    await eventually(async () => (await db()('sre_discovery_runs').where({ status: 'running' }).first()) === undefined, 10_000, 'runs to finish');

    const runs: Array<{ slot: Date; trigger: string; status: string }> = await scheduled();
    const jobs = (await queue('discovery').getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter((j) => j.name === 'discovery.run' && j.data.trigger === 'schedule');
    expect(runs.length).toBeGreaterThanOrEqual(Math.max(3, Math.floor(elapsedSlots) - 1));
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(elapsedSlots) + 1);
    expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
    // One job per slot (the queue dropped the other schedulers' ticks), one run per job.
    expect(jobs).toHaveLength(runs.length);
    const slots = runs.map((r) => r.slot.getTime());
    expect(new Set(slots).size).toBe(slots.length);
    slots.slice(1).forEach((s, i) => expect(s - slots[i]!).toBe(2000));
  });

  it('sources can be added as rows; with auto-apply off, recommendations stay proposed and no monitor is made; no model or no Prometheus answers 503', async () => {
    const created = await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'edge-proxy', kind: 'traefik', address: traefik.url } });
    expect(created.status).toBe(201);
    expect((await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'edge-proxy', kind: 'traefik', address: traefik.url } })).status).toBe(409);
    const bad = await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'X Y', kind: 'ftp' } });
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual(['body.address', 'body.kind', 'body.name']);

    const { run_id } = (await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json()) as { run_id: string };
    const run = await eventually(async () => {
      const r = (await (await api.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()) as { status: string; added: number };
      return r.status !== 'running' && r;
    });
    expect(run).toMatchObject({ status: 'succeeded', added: 3 });
    const recs = (await (await api.request('/api/v1/cmdb/recommendations')).json()) as { items: Array<{ alert: string; status: string }> };
    expect(recs.items.map((r) => `${r.alert}:${r.status}`)).toEqual(['Router5xxRatioHigh:proposed']);
    expect(((await (await api.request('/api/v1/cmdb/monitors')).json()) as { items: unknown[] }).items).toEqual([]);

    // Without a language model (LLM_PROVIDER=none) proposals are unavailable, not an error of ours.
    const router = ((await (await api.request('/api/v1/cmdb/entities?type=router')).json()) as { items: Array<{ id: string }> }).items[0]!;
    expect((await api.request(`/api/v1/cmdb/entities/${router.id}/recommendations/propose`, { method: 'POST' })).status).toBe(503);
    // Deploying needs METRICS_URL.
    expect((await api.request('/api/v1/cmdb/monitors/deploy-all', { method: 'POST' })).status).toBe(503);
  });
});
