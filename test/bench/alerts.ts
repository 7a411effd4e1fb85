/**
 * Alert ingestion benchmark: Alertmanager-shaped payloads of 100 alerts over 1,000 fingerprints,
 * POSTed open-loop at a fixed rate to /webhooks/alertmanager/default. The web and worker roles run as
 * child processes (as in production: api/main and workers/main) against a scratch database cloned from
 * the migrated template and their own queue prefix; this process only generates load and counts rows.
 * Prints alerts/s end to end (first request accepted → every alert committed), webhook latency
 * percentiles, row-count checks, and the ratio of p99 at full rate to a light-load baseline of the same run.
 *
 *   npm run bench:alerts                       # 250 payloads/s (25,000 alerts/s) for 10 s
 *   BENCH_RATE=300 BENCH_SECONDS=15 npm run bench:alerts
 *   BENCH_PROF=/tmp/prof npm run bench:alerts   # also writes a V8 CPU profile of each role there
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { cloneTemplate, dropDatabase, ensureTemplate, serverUrl } from '../helpers/databases.js';
import { spawnRole, stopChildren } from '../../shared/cli/roles.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { cpuSnapshot } from './machine-cpu.js';
import { percentile } from './percentile.js';

const rate = Number(process.env.BENCH_RATE ?? 250);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const baselineRate = 10;
const baselineSeconds = 3;
const alertsPerPayload = 100;
const fingerprints = 1000;

const template = await ensureTemplate();
const database = await cloneTemplate(template);
const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
const port = await new Promise<number>((resolve) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => {
    const p = (srv.address() as net.AddressInfo).port;
    srv.close(() => resolve(p));
  });
});
Object.assign(process.env, {
  DATABASE_URL: serverUrl(database),
  QUEUE_PREFIX: prefix,
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  API_KEYS: 'bench-key',
  WORKER_METRICS_PORT: '0',
  PORT: String(port),
  HOST: '127.0.0.1',
  SERVICE_SESSION_SYSTEM: 'false',
  DISCOVERY_ENABLED: 'false',
});
const url = `http://127.0.0.1:${port}`;
const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
const children = [spawnRole('api/main', process.env, profile), spawnRole('workers/main', process.env, profile)];

const { closeQueues, enqueue } = await import('../../shared/queues.js');
const { normalizeAlerts, alertmanagerPayload } = await import('../../shared/sre/alerts/payloads.js');
const { db, closeDb } = await import('../../shared/db/index.js');
const { alertFingerprint } = await import('../../shared/sre/alerts/fingerprint.js');

for (let i = 0; ; i++) {
  if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
  if (i > 200) throw new Error('the API did not start');
  await new Promise((r) => setTimeout(r, 100));
}

const labelSets = Array.from({ length: fingerprints }, (_, i) => ({
  alertname: `BenchAlert${i % 20}`,
  instance: `host-${i}:9100`,
  job: 'node',
  severity: i % 10 === 0 ? 'critical' : 'warning',
}));
const printed = labelSets.map((l) => alertFingerprint(l));
/** Payload k carries fingerprints k*100 … k*100+99 (mod 1000), as Alertmanager sends them. */
function payload(k: number): string {
  const alerts = Array.from({ length: alertsPerPayload }, (_, i) => {
    const n = (k * alertsPerPayload + i) % fingerprints;
    return {
      status: 'firing',
      labels: labelSets[n],
      annotations: { summary: `value ${k}` },
      startsAt: '2026-11-21T23:34:58Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph',
      fingerprint: printed[n],
    };
  });
  return JSON.stringify({ receiver: 'bench', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://am:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0 });
}

/** CPU seconds used so far by each role, Postgres, Redis and this load generator; machine-wide softirq, steal and idle. */
function cpuByRole(): Record<string, number> {
  const { used, machine } = cpuSnapshot({ api: children[0]!.pid!, worker: children[1]!.pid!, load: process.pid });
  return { ...used, softirq: machine.softirq, steal: machine.steal, idle: machine.idle };
}

// Plain node:http with a keep-alive agent: fetch cost the load generator ~1.8 ms of CPU a payload, taken from the roles it measures.
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
/** POSTs one webhook body; resolves with the status once the response has been read. */
const post = (body: string) =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(
      `${url}/webhooks/alertmanager/default`,
      { agent, method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': 'Alertmanager/0.25.0' } },
      (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)),
    );
    req.on('error', reject);
    req.end(body);
  });

const committed = async () => Number((await db()('sre_alert_instances').sum({ n: 'occurrence_count' }).first())?.n ?? 0);

/** Open loop: sends `count` payloads at `perSecond`, never waiting for answers; resolves with latencies. */
async function phase(name: string, perSecond: number, durationS: number, offset: number, expectedBefore: number) {
  const count = Math.round(perSecond * durationS);
  const latencies: number[] = [];
  let failures = 0;
  const failedWith = new Map<string, number>();
  const fail = (why: string) => {
    failures += 1;
    failedWith.set(why, (failedWith.get(why) ?? 0) + 1);
  };
  const bodies = Array.from({ length: count }, (_, i) => payload(offset + i));
  const cpuBefore = cpuByRole();
  const start = performance.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    sends.push(
      post(bodies[i]!)
        .then((status) => {
          if (status === 202) latencies.push(performance.now() - t0);
          else fail(`HTTP ${status}`);
        })
        .catch((err: Error) => fail(err.message)),
    );
  }
  await Promise.all(sends);
  const acceptedAt = performance.now();
  const expected = expectedBefore + latencies.length * alertsPerPayload;
  while ((await committed()) < expected) await new Promise((r) => setTimeout(r, 50));
  const doneAt = performance.now();
  const cpuAfter = cpuByRole();
  const alerts = latencies.length * alertsPerPayload;
  const result = {
    name,
    offered: `${perSecond} payloads/s = ${perSecond * alertsPerPayload} alerts/s for ${durationS} s`,
    accepted: latencies.length,
    failures,
    endToEndAlertsPerSecond: Math.round(alerts / ((doneAt - start) / 1000)),
    acceptAlertsPerSecond: Math.round(alerts / ((acceptedAt - start) / 1000)),
    drainAfterLastAcceptMs: Math.round(doneAt - acceptedAt),
    p50: percentile(latencies.sort((a, b) => a - b), 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
  console.log(
    `${name.padEnd(9)} offered ${result.offered}; accepted ${result.accepted} payloads (${failures} failed)\n` +
      `          end to end ${result.endToEndAlertsPerSecond} alerts/s (accepted → rows committed; drained ${result.drainAfterLastAcceptMs} ms after the last 202)\n` +
      `          webhook latency ms p50 ${result.p50.toFixed(1)}  p95 ${result.p95.toFixed(1)}  p99 ${result.p99.toFixed(1)}  max ${result.max.toFixed(1)}\n` +
      `          CPU s ${Object.entries(cpuAfter).map(([role, s]) => `${role} ${(s - cpuBefore[role]!).toFixed(1)}`).join(', ')}` +
      (failures ? `\n          failed with: ${[...failedWith].map(([why, n]) => `${why} ×${n}`).join(', ')}` : ''),
  );
  return { ...result, expected };
}

/**
 * The write path alone (no HTTP): the same payloads enqueued straight onto the sre queue as the API
 * would, measured from the first enqueue until every alert is committed. Shows where the ceiling is.
 */
async function writePath(count: number, offset: number, expectedBefore: number) {
  const source = (await db()('sre_alert_sources').where({ kind: 'alertmanager', name: 'default' }).first()) as { id: string };
  const jobs = Array.from({ length: count }, (_, i) => ({
    payload_id: randomUUID(),
    source_id: source.id,
    source: 'alertmanager/default',
    received_at: new Date().toISOString(),
    alerts: normalizeAlerts(alertmanagerPayload.parse(JSON.parse(payload(offset + i)))),
  }));
  const start = performance.now();
  for (let i = 0; i < jobs.length; i += 50) await Promise.all(jobs.slice(i, i + 50).map((j) => enqueue('sre.alerts-ingest', j)));
  const enqueuedAt = performance.now();
  const expected = expectedBefore + count * alertsPerPayload;
  while ((await committed()) < expected) await new Promise((r) => setTimeout(r, 50));
  const alertsPerSecond = Math.round((count * alertsPerPayload) / ((performance.now() - start) / 1000));
  console.log(`writes    ${count} payloads enqueued directly (no HTTP) in ${Math.round(enqueuedAt - start)} ms; worker write path ${alertsPerSecond} alerts/s (enqueue → rows committed)`);
  return { expected, count };
}

try {
  const base = await phase('baseline', baselineRate, baselineSeconds, 0, 0);
  const full = await phase('full', rate, seconds, baselineRate * baselineSeconds, base.expected);
  const direct = await writePath(Math.round(rate * 4), 100_000, full.expected);
  const rows = (await db()('sre_alert_instances').count({ n: '*' }).first()) as { n: number };
  const firing = (await db()('sre_alert_instances').where('status', 'firing').count({ n: '*' }).first()) as { n: number };
  const payloads = (await db()('sre_alert_payloads').count({ n: '*' }).first()) as { n: number };
  const sum = await committed();
  const checks = [
    [`alert instances = ${fingerprints}`, Number(rows.n) === fingerprints, Number(rows.n)],
    [`all firing = ${fingerprints}`, Number(firing.n) === fingerprints, Number(firing.n)],
    [`sum(occurrence_count) = alerts accepted (${direct.expected})`, sum === direct.expected, sum],
    [`payload rows = payloads accepted (${base.accepted + full.accepted + direct.count})`, Number(payloads.n) === base.accepted + full.accepted + direct.count, Number(payloads.n)],
  ] as const;
  for (const [what, ok, got] of checks) console.log(`check     ${ok ? 'ok  ' : 'FAIL'} ${what} (got ${got})`);
  console.log(`ratio     p99 full / p99 baseline = ${(full.p99 / base.p99).toFixed(2)}; end-to-end alerts/s full / baseline = ${(full.endToEndAlertsPerSecond / base.endToEndAlertsPerSecond).toFixed(1)}`);
  console.log(`target    >= 20000 alerts/s end to end: ${full.endToEndAlertsPerSecond >= 20_000 ? 'met' : 'NOT met'} (${full.endToEndAlertsPerSecond})`);
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
} finally {
  agent.destroy();
  await stopChildren(children);
  await closeQueues();
  await closeDb();
  await dropDatabase(database);
  await deleteKeysWithPrefix(prefix);
}
