// needs: prometheus
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import type { ContainerSummary } from '../../shared/clients/docker.js';
import type { TraefikRouter, TraefikService } from '../../shared/clients/traefik.js';
import { changedRows, dockerApiServer, traefikApiServer, metricsEndpoint, rowVersions, startPrometheus, waitForScrapes } from './discovery-servers.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';

// The fixtures of the container runtime and the proxy, in their APIs' documented shapes.
const metrics = await metricsEndpoint();
const closedPort = await freePort();

const container = (name: string, ip: string, status: string, extra: Partial<ContainerSummary> = {}): ContainerSummary => ({
  Id: `${name}-0123456789abcdef`,
  Names: [`/${name}`],
  Image: `example/${name}:1`,
  State: 'running',
  Status: status,
  Labels: {},
  Ports: [],
  NetworkSettings: { Networks: { shop_default: { IPAddress: ip, Aliases: null } } },
  ...extra,
});
const compose = (project: string, service: string) => ({ 'com.docker.compose.project': project, 'com.docker.compose.service': service, 'com.docker.compose.oneoff': 'False' });

const docker = {
  containers: [
    container('shop-web-1', '172.20.0.2', 'Up 5 minutes (healthy)', { Labels: compose('shop', 'web'), Ports: [{ PrivatePort: 80, Type: 'tcp' }] }),
    container('shop-db-1', '172.20.0.3', 'Up 5 minutes (unhealthy)', { Labels: compose('shop', 'db'), Ports: [{ PrivatePort: 5432, Type: 'tcp' }] }),
    container('exporter', '172.20.0.4', 'Up 1 hour', { Ports: [{ IP: '127.0.0.1', PrivatePort: 9100, PublicPort: metrics.port, Type: 'tcp' }] }),
    container('batch', '172.20.0.5', 'Exited (1) 3 minutes ago', { State: 'exited', NetworkSettings: { Networks: {} } }),
  ],
  delayMs: 0,
  fail: false,
};
const routers: TraefikRouter[] = [
  { name: 'shop@docker', provider: 'docker', rule: 'Host(`shop.example.com`) || Host(`www.shop.example.com`)', service: 'shop', entryPoints: ['websecure'], status: 'enabled' },
  { name: 'dashboard@internal', provider: 'internal', rule: 'PathPrefix(`/api`)', service: 'api@internal', entryPoints: ['traefik'], status: 'enabled' },
];
const services: TraefikService[] = [
  { name: 'shop@docker', provider: 'docker', type: 'loadbalancer', status: 'enabled', loadBalancer: { servers: [{ url: 'http://172.20.0.2:80' }] }, serverStatus: { 'http://172.20.0.2:80': 'UP' } },
  { name: 'api@internal', provider: 'internal', status: 'enabled' },
];
const traefikState = { routers, services, fail: false };

const dockerApi = await dockerApiServer(docker);
const traefikApi = await traefikApiServer(traefikState);
const prometheus = await startPrometheus({ app: [`127.0.0.1:${metrics.port}`], node: [`127.0.0.1:${closedPort}`] });
process.env.CONTAINER_RUNTIME_HOST = `tcp://127.0.0.1:${dockerApi.port}`;
process.env.METRICS_URL = prometheus.url;
process.env.PROXY_API_URL = traefikApi.url;
process.env.DISCOVERY_ENABLED = 'false';
process.env.MONITORS_AUTO_APPLY = 'true';
process.env.RULES_DIR = await mkdtemp(path.join(os.tmpdir(), 'sb-rules-'));

const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const api = await startPlatform();

afterAll(async () => {
  await Promise.all([prometheus.stop(), dockerApi.close(), traefikApi.close(), metrics.close()]);
});

type Run = { id: string; status: string; added: number; updated: number; unchanged: number; stale: number; rows_written: number; errors: Record<string, string> };
type Entity = { id: string; type: string; name: string; source: string; health: string; stale: boolean; last_seen_at: string; attributes: Record<string, unknown> };

async function trigger(): Promise<{ run_id: string; already_running: boolean; status: string }> {
  const res = await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' });
  expect(res.status).toBe(202);
  return res.json();
}
async function finished(runId: string): Promise<Run> {
  return eventually(async () => {
    const run = (await (await api.request(`/api/v1/cmdb/discovery/runs/${runId}`)).json()) as Run;
    return run.status !== 'running' && run;
  }, 20_000, 'the discovery run');
}
async function discover(): Promise<Run> {
  return finished((await trigger()).run_id);
}
async function entities(query = ''): Promise<Entity[]> {
  const res = await api.request(`/api/v1/cmdb/entities?limit=500${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Entity[] }).items;
}
const byName = (list: Entity[], type: string, name: string) => {
  const found = list.find((e) => e.type === type && e.name === name);
  if (!found) throw new Error(`no ${type} ${name} in ${list.map((e) => `${e.type}:${e.name}`).join(', ')}`);
  return found;
};

let first: Run;
beforeAll(async () => {
  await waitForScrapes(prometheus.url, 3);
  first = await discover();
});

describe('discovery', () => {
  it('a run reads containers, compose projects, scrape targets and jobs, routers, services and hostnames', async () => {
    expect(first.status).toBe('succeeded');
    const all = await entities();
    const summary = all.map((e) => `${e.source}/${e.type}/${e.name}`).sort();
    expect(summary).toEqual([
      'docker/compose_project/shop',
      'docker/container/batch',
      'docker/container/exporter',
      'docker/container/shop-db-1',
      'docker/container/shop-web-1',
      `prometheus/scrape_job/app`,
      `prometheus/scrape_job/node`,
      `prometheus/scrape_job/prometheus`,
      `prometheus/scrape_target/127.0.0.1:${closedPort}`,
      `prometheus/scrape_target/127.0.0.1:${metrics.port}`,
      `prometheus/scrape_target/${new URL(prometheus.url).host}`,
      'traefik/hostname/shop.example.com',
      'traefik/hostname/www.shop.example.com',
      'traefik/proxy_service/api@internal',
      'traefik/proxy_service/shop@docker',
      'traefik/router/dashboard@internal',
      'traefik/router/shop@docker',
    ].sort());
    expect(first.added).toBe(all.length);
    expect(dockerApi.requests.some((r) => /\/containers\/json\?all=(1|true)/.test(r))).toBe(true);
  });

  it('health comes from container state and the "(healthy)"/"(unhealthy)" status texts, target health and server status', async () => {
    const all = await entities();
    expect(byName(all, 'container', 'shop-web-1').health).toBe('healthy');
    expect(byName(all, 'container', 'shop-db-1').health).toBe('unhealthy');
    expect(byName(all, 'container', 'batch').health).toBe('down');
    expect(byName(all, 'compose_project', 'shop').health).toBe('degraded');
    expect(byName(all, 'scrape_target', `127.0.0.1:${metrics.port}`).health).toBe('healthy');
    expect(byName(all, 'scrape_target', `127.0.0.1:${closedPort}`).health).toBe('down');
    expect(byName(all, 'scrape_job', 'node').health).toBe('down');
    expect(byName(all, 'proxy_service', 'shop@docker').health).toBe('healthy');
    expect(byName(all, 'router', 'shop@docker').attributes.hostnames).toEqual(['shop.example.com', 'www.shop.example.com']);
  });

  it('relationships are derived: part_of project, hostname → router → service → container, target scraped_by job and runs_on its container', async () => {
    const all = await entities();
    const detail = async (e: Entity) => (await (await api.request(`/api/v1/cmdb/entities/${e.id}`)).json()) as { relationships: Array<{ type: string; direction: string; entity_name: string; entity_type: string }> };
    const rel = (d: Awaited<ReturnType<typeof detail>>) => d.relationships.map((r) => `${r.direction} ${r.type} ${r.entity_type}:${r.entity_name}`).sort();

    expect(rel(await detail(byName(all, 'container', 'shop-web-1')))).toEqual(['incoming routes_to proxy_service:shop@docker', 'outgoing part_of compose_project:shop']);
    expect(rel(await detail(byName(all, 'router', 'shop@docker')))).toEqual([
      'incoming routes_to hostname:shop.example.com',
      'incoming routes_to hostname:www.shop.example.com',
      'outgoing routes_to proxy_service:shop@docker',
    ]);
    expect(rel(await detail(byName(all, 'scrape_target', `127.0.0.1:${metrics.port}`)))).toEqual(['outgoing runs_on container:exporter', 'outgoing scraped_by scrape_job:app']);
    expect(rel(await detail(byName(all, 'router', 'dashboard@internal')))).toEqual(['outgoing routes_to proxy_service:api@internal']);
  });

  it("an entity's neighbourhood follows relationships both ways to depth n", async () => {
    const all = await entities();
    const host = byName(all, 'hostname', 'shop.example.com');
    const at = async (depth: number) => {
      const body = (await (await api.request(`/api/v1/cmdb/entities/${host.id}/neighbourhood?depth=${depth}`)).json()) as { entities: Array<Entity & { distance: number }>; relationships: unknown[] };
      return body.entities.map((e) => `${e.distance}:${e.type}:${e.name}`);
    };
    expect(await at(1)).toEqual(['0:hostname:shop.example.com', '1:router:shop@docker']);
    expect(await at(3)).toEqual([
      '0:hostname:shop.example.com',
      '1:router:shop@docker',
      '2:hostname:www.shop.example.com',
      '2:proxy_service:shop@docker',
      '3:container:shop-web-1',
    ]);
    expect((await at(4)).at(-1)).toBe('4:compose_project:shop');
    const bad = await api.request(`/api/v1/cmdb/entities/${host.id}/neighbourhood?depth=9`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('query.depth');
  });

  it('lists filter by type, source, health, stale and text', async () => {
    expect((await entities('&type=container')).map((e) => e.name)).toEqual(['batch', 'exporter', 'shop-db-1', 'shop-web-1']);
    expect((await entities('&source=traefik&type=router')).map((e) => e.name)).toEqual(['dashboard@internal', 'shop@docker']);
    expect((await entities('&health=unhealthy')).map((e) => e.name)).toEqual(['shop-db-1']);
    expect((await entities('&q=WWW.SHOP')).map((e) => `${e.type}:${e.name}`)).toEqual(['hostname:www.shop.example.com', 'router:shop@docker']);
    expect(await entities('&stale=true')).toEqual([]);
    const bad = await api.request('/api/v1/cmdb/entities?type=spaceship&health=meh');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual(['query.health', 'query.type']);
    expect((await api.request('/api/v1/cmdb/entities/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api.request('/api/v1/cmdb/entities', { auth: false })).status).toBe(401);
  });

  it('recommendations for new entities come from the templates and, with auto-apply, become pending monitors', async () => {
    const all = await entities();
    const alerts = async (e: Entity) => {
      const body = (await (await api.request(`/api/v1/cmdb/entities/${e.id}`)).json()) as { monitors: Array<{ alert: string; status: string }>; recommendations: Array<{ status: string }> };
      expect(body.recommendations.every((r) => r.status === 'applied')).toBe(true);
      expect(body.monitors.every((m) => m.status === 'pending')).toBe(true);
      return body.monitors.map((m) => m.alert).sort();
    };
    expect(await alerts(byName(all, 'container', 'shop-web-1'))).toEqual(['ContainerDown', 'ContainerHighCpu', 'ContainerHighMemory', 'ContainerRestarting', 'ContainerUnhealthy']);
    // No health check ("(healthy)" absent from its status): no unhealthy template.
    expect(await alerts(byName(all, 'container', 'exporter'))).toEqual(['ContainerDown', 'ContainerHighCpu', 'ContainerHighMemory', 'ContainerRestarting']);
    expect(await alerts(byName(all, 'scrape_target', `127.0.0.1:${closedPort}`))).toEqual(['ScrapeTargetDown']);
    expect(await alerts(byName(all, 'router', 'shop@docker'))).toEqual(['Router5xxRatioHigh']);
    expect(await alerts(byName(all, 'hostname', 'shop.example.com'))).toEqual(['HostnameProbeFailed']);
    expect(await alerts(byName(all, 'compose_project', 'shop'))).toEqual(['ComposeContainersMissing']);
    expect(await alerts(byName(all, 'scrape_job', 'node'))).toEqual(['ScrapeJobNoTargetUp']);
    expect(await alerts(byName(all, 'proxy_service', 'shop@docker'))).toEqual(['ProxyServiceNoServerUp']);
    // A service without servers (Traefik's internal API) has nothing to watch.
    expect(await alerts(byName(all, 'proxy_service', 'api@internal'))).toEqual([]);
  });

  it('an unchanged re-run writes no rows', async () => {
    const before = await rowVersions(db());
    const run = await discover();
    const after = await rowVersions(db());
    expect(changedRows(before, after)).toEqual([]);
    expect(run).toMatchObject({ status: 'succeeded', added: 0, updated: 0, stale: 0, rows_written: 0 });
    expect(run.unchanged).toBe((await entities()).length);
  });

  it('a trigger during a running run returns that run', async () => {
    docker.delayMs = 1500;
    try {
      const a = await trigger();
      const b = await trigger();
      expect(a.already_running).toBe(false);
      expect(b).toMatchObject({ run_id: a.run_id, already_running: true, status: 'running' });
      await finished(a.run_id);
      const c = await trigger();
      expect(c.run_id).not.toBe(a.run_id);
      await finished(c.run_id);
    } finally {
      docker.delayMs = 0;
    }
  });

  it('a failing source fails only its own part of the run and leaves its entities as they were', async () => {
    traefikState.fail = true;
    docker.containers[0] = { ...docker.containers[0]!, Status: 'Up 6 minutes (unhealthy)' };
    try {
      const run = await discover();
      expect(run.status).toBe('partial');
      expect(Object.keys(run.errors)).toEqual(['traefik']);
      expect(run.errors.traefik).toMatch(/500/);
      expect(run.updated).toBe(2); // the web container and its compose project
      const all = await entities();
      expect(byName(all, 'container', 'shop-web-1').health).toBe('unhealthy');
      expect(all.filter((e) => e.source === 'traefik').every((e) => !e.stale)).toBe(true);
      const status = (await (await api.request('/api/v1/cmdb/discovery/status?per_source=2')).json()) as { sources: Array<{ name: string; last_runs: Array<{ status: string; error: string | null; run_id: string }> }> };
      const traefik = status.sources.find((s) => s.name === 'traefik')!;
      expect(traefik.last_runs[0]).toMatchObject({ run_id: run.id, status: 'failed' });
      expect(traefik.last_runs[1]!.status).toBe('succeeded');
      expect(status.sources.find((s) => s.name === 'docker')!.last_runs[0]).toMatchObject({ run_id: run.id, status: 'succeeded', error: null });
    } finally {
      traefikState.fail = false;
    }
  });

  it('entities no longer reported are marked stale, not deleted, and come back when seen again', async () => {
    const db1 = docker.containers.splice(1, 1)[0]!;
    const lastRun = (await entities('&type=container')).find((e) => e.name === 'shop-db-1')!.last_seen_at;
    const run = await discover();
    expect(run.stale).toBe(1);
    const stale = await entities('&stale=true');
    expect(stale.map((e) => e.name)).toEqual(['shop-db-1']);
    // Its last sighting is the previous successful docker run, not this one.
    expect(stale[0]!.last_seen_at).toBe(lastRun);
    const live = byName(await entities('&type=container'), 'container', 'exporter');
    expect(new Date(live.last_seen_at).getTime()).toBeGreaterThan(new Date(lastRun).getTime());

    docker.containers.splice(1, 0, db1);
    const back = await discover();
    expect(back.updated).toBeGreaterThanOrEqual(1);
    expect(await entities('&stale=true')).toEqual([]);
    // Coming back is not new: no second set of recommendations.
    const recs = (await (await api.request(`/api/v1/cmdb/recommendations?entity_id=${stale[0]!.id}`)).json()) as { items: unknown[] };
    expect(recs.items).toHaveLength(5);
  });

  it('the CMDB routes are documented in /api/openapi.json with the decisions the spec leaves open', async () => {
    const doc = (await (await api.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, { description?: string; responses: Record<string, unknown> }>> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/cmdb')).length).toBeGreaterThanOrEqual(14);
    expect(doc.paths['/api/v1/cmdb/discovery/trigger']!.post!.responses).toHaveProperty('202');
    expect(doc.paths['/api/v1/cmdb/monitors/deploy-all']!.post!.description).toMatch(/previous rule file is restored/);
  });
});
