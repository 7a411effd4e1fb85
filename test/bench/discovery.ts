/**
 * Discovery benchmark: one run over 5,000 containers (500 compose projects), 1,000 routers and
 * services, and 2,000 scrape targets, served locally in the systems' wire formats, through the
 * real path (POST /trigger → discovery queue → worker → Postgres). Prints run time, entities/s,
 * the rows a second, unchanged run writes (target 0; counted by the run and by row versions),
 * and the same-run baseline: fetching and parsing the sources alone.
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cloneTemplate, dropDatabase, ensureTemplate, serverUrl } from '../helpers/databases.js';
import { changedRows, dockerApiServer, traefikApiServer, rowVersions } from '../sre/discovery-servers.js';
import type { ContainerSummary } from '../../shared/clients/docker.js';

const CONTAINERS = 5000;
const ROUTERS = 1000;
const TARGETS = 2000;

const ip = (i: number) => `10.${Math.floor(i / 65536) % 256}.${Math.floor(i / 256) % 256}.${i % 256}`;
const containers: ContainerSummary[] = Array.from({ length: CONTAINERS }, (_, i) => ({
  Id: `${i.toString(16).padStart(12, '0')}${'0'.repeat(52)}`,
  Names: [`/proj${Math.floor(i / 10)}-svc${i % 10}-1`],
  Image: `example/svc${i % 10}:1.${i % 3}`,
  State: i % 50 === 0 ? 'exited' : 'running',
  Status: i % 50 === 0 ? 'Exited (1) 2 minutes ago' : i % 7 === 0 ? 'Up 3 hours (unhealthy)' : 'Up 3 hours (healthy)',
  Labels: { 'com.docker.compose.project': `proj${Math.floor(i / 10)}`, 'com.docker.compose.service': `svc${i % 10}` },
  Ports: [{ PrivatePort: 8080, Type: 'tcp' }, { PrivatePort: 9100, Type: 'tcp' }],
  NetworkSettings: { Networks: { [`proj${Math.floor(i / 10)}_default`]: { IPAddress: ip(i), Aliases: null } } },
}));
const routers = Array.from({ length: ROUTERS }, (_, i) => ({ name: `r${i}@docker`, provider: 'docker', rule: `Host(\`app${i}.example.com\`)`, service: `s${i}`, entryPoints: ['websecure'], status: 'enabled' }));
const services = Array.from({ length: ROUTERS }, (_, i) => ({
  name: `s${i}@docker`, provider: 'docker', type: 'loadbalancer', status: 'enabled',
  loadBalancer: { servers: [{ url: `http://${ip(i * 5)}:8080` }] }, serverStatus: { [`http://${ip(i * 5)}:8080`]: 'UP' },
}));
const targets = Array.from({ length: TARGETS }, (_, i) => {
  const job = i % 2 ? 'node' : 'app';
  const address = `${ip(i * 2)}:${job === 'node' ? 9100 : 8080}`;
  return {
    discoveredLabels: { __address__: address, __metrics_path__: '/metrics', __scheme__: 'http', __scrape_interval__: '15s', __scrape_timeout__: '10s', job },
    labels: { instance: address, job },
    scrapePool: job, scrapeUrl: `http://${address}/metrics`, globalUrl: `http://${address}/metrics`,
    lastError: i % 13 === 0 ? `Get "http://${address}/metrics": context deadline exceeded` : '',
    lastScrape: new Date().toISOString(), lastScrapeDuration: Math.random() / 100,
    health: i % 13 === 0 ? 'down' : 'up', scrapeInterval: '15s', scrapeTimeout: '10s',
  };
});

async function main() {
  const dockerApi = await dockerApiServer({ containers });
  const traefikApi = await traefikApiServer({ routers, services });
  const prom = http.createServer((req, res) => {
    // Scrape times differ on every call, as they do in Prometheus; discovery must ignore them.
    const body = { status: 'success', data: { activeTargets: targets.map((t) => ({ ...t, lastScrape: new Date().toISOString(), lastScrapeDuration: Math.random() / 100 })), droppedTargets: [] } };
    if (req.url?.startsWith('/api/v1/targets')) res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => prom.listen(0, '127.0.0.1', resolve));

  const database = await cloneTemplate(await ensureTemplate());
  const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
  const rulesDir = await mkdtemp(path.join(os.tmpdir(), 'sb-bench-rules-'));
  Object.assign(process.env, {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATABASE_URL: serverUrl(database),
    QUEUE_PREFIX: prefix,
    WORKER_METRICS_PORT: '0',
    DISCOVERY_ENABLED: 'false',
    CONTAINER_RUNTIME_HOST: `tcp://127.0.0.1:${dockerApi.port}`,
    METRICS_URL: `http://127.0.0.1:${(prom.address() as AddressInfo).port}`,
    PROXY_API_URL: traefikApi.url,
    RULES_DIR: rulesDir,
  });
  const { startPlatform } = await import('../helpers/platform.js');
  const { db, closeDb } = await import('../../shared/db/index.js');
  const { allQueues, closeQueues } = await import('../../shared/queues.js');
  const { shutdown } = await import('../../shared/lifecycle.js');
  const { readSource } = await import('../../shared/sre/discovery/run.js');
  const { configuredSources } = await import('../../shared/sre/discovery/sources.store.js');

  try {
    const api = await startPlatform();
    const run = async () => {
      const t0 = performance.now();
      const res = await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' });
      if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${await res.text()}`);
      const { run_id } = (await res.json()) as { run_id: string };
      for (;;) {
        const r = (await (await api.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()) as { status: string; added: number; updated: number; unchanged: number; stale: number; rows_written: number; errors: object };
        if (r.status !== 'running') return { ...r, ms: performance.now() - t0 };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    // Baseline in the same run: fetching and parsing the three sources, no database.
    const b0 = performance.now();
    const parsed = (await Promise.all(configuredSources().map((s) => readSource(s)))).flat();
    const baselineMs = performance.now() - b0;

    const first = await run();
    const entities = first.added + first.updated + first.unchanged;
    const before = await rowVersions(db());
    const second = await run();
    const after = await rowVersions(db());
    const { rows: [{ relationships, monitors }] } = await db().raw('select (select count(*) from sre_relationships) as relationships, (select count(*) from sre_entity_monitors) as monitors');

    console.log(`discovery benchmark: ${CONTAINERS} containers, ${ROUTERS} routers/services, ${TARGETS} targets (${parsed.length} entities parsed)`);
    console.log(`first run:  ${first.status}, ${first.ms.toFixed(0)} ms, ${entities} entities (${first.added} added), ${(entities / (first.ms / 1000)).toFixed(0)} entities/s, ${first.rows_written} rows written (${relationships} relationships, ${monitors} monitors)`);
    console.log(`second run: ${second.status}, ${second.ms.toFixed(0)} ms, ${second.unchanged} unchanged, ${second.added} added, ${second.updated} updated, ${second.stale} stale, ${(entities / (second.ms / 1000)).toFixed(0)} entities/s`);
    console.log(`rows written by the unchanged second run: ${second.rows_written} (run counters), ${changedRows(before, after).length} (row versions over ${before.size} CMDB rows) — target 0`);
    console.log(`baseline (fetch + parse only): ${baselineMs.toFixed(0)} ms; first run / baseline = ${(first.ms / baselineMs).toFixed(1)}x, second run / baseline = ${(second.ms / baselineMs).toFixed(1)}x`);
  } finally {
    await shutdown();
    // This run's queue keys go with its prefix.
    await Promise.all(allQueues().map((q) => q.obliterate({ force: true })));
    await closeQueues();
    await closeDb();
    await dropDatabase(database);
    await Promise.all([dockerApi.close(), traefikApi.close(), new Promise((resolve) => prom.close(resolve)), rm(rulesDir, { recursive: true, force: true })]);
  }
}

await main();
