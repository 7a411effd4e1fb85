/**
 * Alert ingestion benchmark against a real Alertmanager in the same run. Payloads of 100 alerts over
 * 1,000 fingerprints, shaped like the captured Alertmanager 0.25 webhook body
 * (../shared/fixtures/alertmanager/webhook-v4-firing.json), are POSTed open-loop at a fixed rate:
 *
 * - switchboard: the webhook body to /webhooks/alertmanager/default (answer 202). The web and worker
 *   roles run as child processes (api/main, workers/main) against a scratch database cloned from the
 *   migrated template and their own queue prefix. Drained = sum(occurrence_count) in Postgres equals
 *   every alert accepted so far (each alert persisted and deduplicated into its fingerprint's row).
 * - Alertmanager (Debian prometheus-alertmanager, started here on a free port with a temporary
 *   config, storage dir and clustering off): the same alerts (labels, annotations, startsAt, endsAt,
 *   generatorURL) as its POST /api/v2/alerts array (answer 200). Its POST stores the alerts in memory
 *   before answering, and it counts nothing, so drained = a GET /api/v2/alerts shows every fingerprint
 *   of the step with an updatedAt no earlier than the send time of the last payload that carried it
 *   (Alertmanager stamps updatedAt when it receives an alert and keeps the youngest on merge; which
 *   annotations win between two payloads in flight at once is its choice). The lag includes that GET.
 *
 * A POST answered 5xx or not at all is retried with the same bytes as Alertmanager retries it (backoff
 * from 0.5 s), and counts as accepted once a retry is: the final checks then show that every payload
 * counted once, however many attempts reached switchboard.
 *
 * A ramp steps the offered rate; a side holds a step when every payload was accepted at the first
 * attempt, it accepted at ≥ 95 % of the offered rate, and it drained within 1 s of its last 2xx. Its ceiling is the highest
 * step it held; a side stops after two missed steps in a row. The sides alternate which goes first.
 *
 *   npm run bench:alerts                                   # ramp 100…1,000 payloads/s, 5 s a step
 *   BENCH_RATES=300,500,700 BENCH_STEP_SECONDS=10 npm run bench:alerts
 *   BENCH_ANCHOR=off npm run bench:alerts                  # switchboard alone
 *   BENCH_PROF=/tmp/prof npm run bench:alerts               # also writes a V8 CPU profile of each role there
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cloneTemplate, dropDatabase, ensureTemplate, serverUrl } from '../helpers/databases.js';
import { spawnRole, stopChildren } from '../../shared/cli/roles.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { loadavg } from './bench-platform.js';
import { cpuSnapshot } from './machine-cpu.js';
import { percentile } from './percentile.js';

const rates = (process.env.BENCH_RATES ?? process.env.BENCH_RATE ?? '100,200,300,400,500,600,700,800,900,1000').split(',').map(Number);
const stepSeconds = Number(process.env.BENCH_STEP_SECONDS ?? process.env.BENCH_SECONDS ?? 5);
const anchorOn = process.env.BENCH_ANCHOR !== 'off';
const alertmanagerBin = process.env.ALERTMANAGER_BIN ?? '/usr/bin/prometheus-alertmanager';
const baselineRate = 10;
const baselineSeconds = 3;
const alertsPerPayload = 100;
const fingerprints = 1000;
const drainLimitMs = 1000;
const heldShare = 0.95;
/** Retries of a failed POST: 0.5 s … 8.5 s apart, ~25 s in all (Alertmanager stops at the notification timeout). */
const retryAttempts = 8;

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });

const template = await ensureTemplate();
const database = await cloneTemplate(template);
const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
const port = await freePort();
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

// Alertmanager: a null receiver (routes and groups every alert, notifies nobody), in-memory store with
// its snapshots in a temporary directory, no cluster listener.
const amDir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-am-'));
const amPort = await freePort();
const amUrl = `http://127.0.0.1:${amPort}`;
let alertmanager: ChildProcess | undefined;
if (anchorOn) {
  writeFileSync(path.join(amDir, 'alertmanager.yml'), `route:\n  receiver: 'null'\n  group_by: [alertname]\nreceivers:\n  - name: 'null'\n`);
  alertmanager = spawn(
    alertmanagerBin,
    [`--config.file=${path.join(amDir, 'alertmanager.yml')}`, `--storage.path=${amDir}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address=', '--log.level=warn'],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
}

const { closeQueues, enqueue } = await import('../../shared/queues.js');
const { alertmanagerPayload } = await import('../../shared/sre/alerts/payloads.js');
const { webhookJob } = await import('../../shared/sre/alerts/ingest.js');
const { db, closeDb } = await import('../../shared/db/index.js');
const { alertFingerprint } = await import('../../shared/sre/alerts/fingerprint.js');

async function waitFor(what: string, probe: string) {
  for (let i = 0; ; i++) {
    if (await fetch(probe).then((r) => r.ok, () => false)) return;
    if (i > 300) throw new Error(`${what} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
await waitFor('the API', `${url}/healthz`);
if (alertmanager) await waitFor('Alertmanager', `${amUrl}/-/ready`);

// The captured webhook body gives the envelope and each alert's fields; labels vary over 1,000 fingerprints.
const captured = JSON.parse(readFileSync(new URL('../../../shared/fixtures/alertmanager/webhook-v4-firing.json', import.meta.url), 'utf8'));
const capturedAlert = captured.alerts[0];
const labelSets = Array.from({ length: fingerprints }, (_, i) => ({
  alertname: `BenchAlert${i % 20}`,
  instance: `host-${i}:9100`,
  job: 'node',
  severity: i % 10 === 0 ? 'critical' : 'warning',
}));
const printed = labelSets.map((l) => alertFingerprint(l));
/** Fingerprint indexes of payload k: k*100 … k*100+99 (mod 1000), as Alertmanager sends them. */
const indexesOf = (k: number) => Array.from({ length: alertsPerPayload }, (_, i) => (k * alertsPerPayload + i) % fingerprints);
const alertOf = (k: number, n: number) => ({
  labels: labelSets[n],
  annotations: { runbook_url: capturedAlert.annotations.runbook_url, summary: `value ${k}` },
  startsAt: capturedAlert.startsAt,
  endsAt: capturedAlert.endsAt,
  generatorURL: capturedAlert.generatorURL,
});
/** The webhook body switchboard receives. */
const webhookBody = (k: number) =>
  Buffer.from(
    JSON.stringify({
      ...captured,
      receiver: 'bench',
      status: 'firing',
      alerts: indexesOf(k).map((n) => ({ status: 'firing', ...alertOf(k, n), fingerprint: printed[n] })),
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      truncatedAlerts: 0,
    }),
  );
/** The same alerts as Alertmanager's own ingest API takes them. */
const alertmanagerBody = (k: number) => Buffer.from(JSON.stringify(indexesOf(k).map((n) => alertOf(k, n))));

/** CPU seconds used so far by each process of interest, Postgres, Redis; machine-wide softirq and idle. */
function cpuByRole(): Record<string, number> {
  const pids: Record<string, number> = { api: children[0]!.pid!, worker: children[1]!.pid!, load: process.pid };
  if (alertmanager?.pid) pids.alertmanager = alertmanager.pid;
  const { used, machine } = cpuSnapshot(pids);
  return { ...used, softirq: machine.softirq, idle: machine.idle };
}

// Plain node:http with a keep-alive agent: fetch cost the load generator ~1.8 ms of CPU a payload, taken from the processes it measures.
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
const post = (target: string, body: Buffer) =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(
      target,
      { agent, method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'User-Agent': 'Alertmanager/0.25.0' } },
      (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)),
    );
    req.on('error', reject);
    req.end(body);
  });

/** One POST: 'ok', or why not. */
const attempt = (side: Side, body: Buffer): Promise<string> =>
  post(side.target, body).then(
    (status) => (status === side.ok ? 'ok' : `HTTP ${status}`),
    (err: Error) => err.message,
  );
/** Alertmanager's webhook notifier retries a 5xx or a failed connection, not another 4xx. */
const retriable = (outcome: string) => !/^HTTP 4(?!29)/.test(outcome);
/**
 * Retries the same bytes as Alertmanager does (exponential backoff from 0.5 s, factor 1.5, until the
 * notification times out); switchboard must count each payload once however many attempts reached it.
 */
async function retry(side: Side, body: Buffer): Promise<boolean> {
  for (let n = 0, delay = 500; n < retryAttempts; n++, delay *= 1.5) {
    await new Promise((r) => setTimeout(r, delay));
    const outcome = await attempt(side, body);
    if (outcome === 'ok') return true;
    if (!retriable(outcome)) return false;
  }
  return false;
}

const committed = async () => Number((await db()('sre_alert_instances').sum({ n: 'occurrence_count' }).first())?.n ?? 0);

interface Side {
  name: 'switchboard' | 'alertmanager';
  target: string;
  ok: number;
  body(k: number): Buffer;
  /** Resolves once everything accepted so far is visible; false if not within `limitMs`. */
  drained(state: { expectedCount: number; lastSentAt: Map<number, number> }, limitMs: number): Promise<boolean>;
}

async function poll(check: () => Promise<boolean>, limitMs: number, everyMs: number): Promise<boolean> {
  const until = performance.now() + limitMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const switchboard: Side = {
  name: 'switchboard',
  target: `${url}/webhooks/alertmanager/default`,
  ok: 202,
  body: webhookBody,
  drained: ({ expectedCount }, limitMs) => poll(async () => (await committed()) >= expectedCount, limitMs, 20),
};

/** Alertmanager's view: fingerprint → when it last received the alert (ms since the epoch). */
async function alertmanagerUpdates(): Promise<Map<string, number>> {
  const res = await fetch(`${amUrl}/api/v2/alerts`);
  const alerts = (await res.json()) as Array<{ fingerprint: string; updatedAt: string }>;
  return new Map(alerts.map((a) => [a.fingerprint, Date.parse(a.updatedAt)]));
}
const alertmanagerSide: Side = {
  name: 'alertmanager',
  target: `${amUrl}/api/v2/alerts`,
  ok: 200,
  body: alertmanagerBody,
  // Polled less often: listing 1,000 alerts costs Alertmanager ~10-20 ms of CPU.
  drained: ({ lastSentAt }, limitMs) =>
    poll(async () => {
      const held = await alertmanagerUpdates();
      for (const [n, sentAt] of lastSentAt) if (!((held.get(printed[n]!) ?? 0) >= sentAt)) return false;
      return true;
    }, limitMs, 50),
};

/** What was accepted on each side so far (the switchboard side's row-count check). */
const acceptedAlerts = { switchboard: 0, alertmanager: 0 };
const acceptedPayloads = { switchboard: 0, alertmanager: 0 };
let nextPayload = 0;

interface StepResult {
  side: Side['name'];
  offered: number;
  accepted: number;
  /** First attempts not answered 2xx. */
  failures: number;
  failedWith: Map<string, number>;
  /** Of those, the ones retried as Alertmanager retries (5xx or no answer), and how many a retry got accepted. */
  retried: number;
  acceptedOnRetry: number;
  achieved: number;
  p50: number;
  p99: number;
  drainMs: number | null;
  held: boolean;
  cpu: Record<string, number>;
}

/** Open loop: sends rate × seconds payloads at `rate`, never waiting for answers, then waits for the drain. */
async function step(side: Side, rate: number, durationS: number): Promise<StepResult> {
  const count = Math.round(rate * durationS);
  const first = nextPayload;
  nextPayload += count;
  const bodies = Array.from({ length: count }, (_, i) => side.body(first + i));
  const latencies: number[] = [];
  const failedWith = new Map<string, number>();
  const fail = (why: string) => {
    failedWith.set(why, (failedWith.get(why) ?? 0) + 1);
  };
  const lastSentAt = new Map<number, number>();
  let retried = 0;
  let acceptedOnRetry = 0;
  const cpuBefore = cpuByRole();
  const start = performance.now();
  let lastAccepted = start;
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    const sentAt = Date.now();
    const k = first + i;
    const accept = () => {
      lastAccepted = performance.now();
      // Payloads are answered out of order under load: keep the latest send per fingerprint.
      for (const n of indexesOf(k)) if ((lastSentAt.get(n) ?? 0) < sentAt) lastSentAt.set(n, sentAt);
    };
    sends.push(
      attempt(side, bodies[i]!).then((outcome) => {
        if (outcome === 'ok') {
          accept();
          latencies.push(lastAccepted - t0);
          return;
        }
        fail(outcome);
        if (retriable(outcome)) {
          retried += 1;
          return retry(side, bodies[i]!).then((ok) => {
            if (!ok) return;
            accept();
            acceptedOnRetry += 1;
          });
        }
      }),
    );
  }
  await Promise.all(sends);
  acceptedAlerts[side.name] += (latencies.length + acceptedOnRetry) * alertsPerPayload;
  acceptedPayloads[side.name] += latencies.length + acceptedOnRetry;
  const drainedNow = await side.drained({ expectedCount: acceptedAlerts[side.name], lastSentAt }, 30_000);
  const drainMs = drainedNow ? performance.now() - lastAccepted : null;
  const cpuAfter = cpuByRole();
  latencies.sort((a, b) => a - b);
  const failures = count - latencies.length;
  const achieved = (latencies.length * alertsPerPayload) / ((lastAccepted - start) / 1000);
  return {
    side: side.name,
    offered: rate * alertsPerPayload,
    accepted: latencies.length,
    failures,
    failedWith,
    retried,
    acceptedOnRetry,
    achieved,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    drainMs,
    held: failures === 0 && achieved >= heldShare * rate * alertsPerPayload && drainMs !== null && drainMs <= drainLimitMs,
    cpu: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, v - cpuBefore[k]!])),
  };
}

const fmt = (r: StepResult | undefined) =>
  r
    ? `${String(Math.round(r.achieved)).padStart(6)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${(r.drainMs === null ? 'never' : Math.round(r.drainMs).toString()).padStart(6)} ${r.held ? 'held' : 'MISS'}`
    : `${'—'.padStart(6)} ${''.padStart(7)} ${''.padStart(7)} ${''.padStart(6)} skip`;
const cpuLine = (r: StepResult) => {
  const keys = r.side === 'switchboard' ? ['api', 'worker', 'postgres', 'redis'] : ['alertmanager'];
  return `${r.side} ${keys.map((k) => `${k} ${r.cpu[k]!.toFixed(1)}`).join(' ')}`;
};

const sides: Side[] = anchorOn ? [switchboard, alertmanagerSide] : [switchboard];
try {
  console.log(`alerts: ${alertsPerPayload}-alert payloads over ${fingerprints} fingerprints, ${stepSeconds} s a step; held = all accepted, ≥ ${heldShare * 100} % of offered, drained ≤ ${drainLimitMs} ms after the last 2xx`);
  console.log(`${''.padEnd(9)} ${'offered'.padStart(7)} | switchboard ${'alerts/s'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'drain'.padStart(6)}      | alertmanager ${'alerts/s'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'drain'.padStart(6)}      | CPU s; loadavg`);
  const ceiling: Record<string, number> = { switchboard: 0, alertmanager: 0 };
  const misses: Record<string, number> = { switchboard: 0, alertmanager: 0 };
  const baselineP99: Record<string, number> = {};
  const stepsRun = [{ label: 'baseline', rate: baselineRate, seconds: baselineSeconds }, ...rates.map((rate) => ({ label: 'step', rate, seconds: stepSeconds }))];
  for (const [i, { label, rate, seconds }] of stepsRun.entries()) {
    const results: Partial<Record<Side['name'], StepResult>> = {};
    const order = i % 2 ? [...sides].reverse() : sides;
    for (const side of order) {
      if (label === 'step' && misses[side.name]! >= 2) continue;
      const r = await step(side, rate, seconds);
      results[side.name] = r;
      if (label === 'baseline') baselineP99[side.name] = r.p99;
      else if (r.held) {
        ceiling[side.name] = Math.max(ceiling[side.name]!, r.offered);
        misses[side.name] = 0;
      } else misses[side.name]! += 1;
    }
    if (!Object.keys(results).length) break;
    const all = Object.values(results);
    console.log(
      `${label.padEnd(9)} ${String(rate * alertsPerPayload).padStart(7)} | switchboard ${fmt(results.switchboard)} | alertmanager ${fmt(results.alertmanager)} | ${all.map(cpuLine).join('; ')}; ${loadavg()}`,
    );
    for (const r of all) {
      if (!r.failures) continue;
      const why = [...r.failedWith].map(([what, n]) => `${what} ×${n}`).join(', ');
      console.log(`          ${r.side} first attempts failed with: ${why}; ${r.retried} retried as Alertmanager would, ${r.acceptedOnRetry} of them accepted on a retry`);
    }
  }

  // The worker's write path alone (no HTTP): payloads enqueued straight onto the sre queue as the API would.
  const source = (await db()('sre_alert_sources').where({ kind: 'alertmanager', name: 'default' }).first()) as { id: string };
  const directCount = Number(process.env.BENCH_WRITES ?? 2000);
  const jobs = Array.from({ length: directCount }, (_, i) => {
    const body = webhookBody(nextPayload + i).toString();
    return webhookJob({ id: source.id, label: 'alertmanager/default' }, alertmanagerPayload.parse(JSON.parse(body)), body, Date.now());
  });
  const writeStart = performance.now();
  for (let i = 0; i < jobs.length; i += 50) await Promise.all(jobs.slice(i, i + 50).map((j) => enqueue('sre.alerts-ingest', j)));
  const enqueuedAt = performance.now();
  acceptedAlerts.switchboard += directCount * alertsPerPayload;
  acceptedPayloads.switchboard += directCount;
  await switchboard.drained({ expectedCount: acceptedAlerts.switchboard, lastSentAt: new Map() }, 120_000);
  const writeRate = Math.round((directCount * alertsPerPayload) / ((performance.now() - writeStart) / 1000));
  console.log(`writes    ${directCount} payloads enqueued directly (no HTTP) in ${Math.round(enqueuedAt - writeStart)} ms; worker write path ${writeRate} alerts/s (enqueue → rows committed); ${loadavg()}`);

  const rows = (await db()('sre_alert_instances').count({ n: '*' }).first()) as { n: number };
  const firing = (await db()('sre_alert_instances').where('status', 'firing').count({ n: '*' }).first()) as { n: number };
  // Rows with retry_of are attempts recognised as retries of a payload that counted (a window boundary between them).
  const payloads = (await db()('sre_alert_payloads').whereNull('retry_of').count({ n: '*' }).first()) as { n: number };
  const sum = await committed();
  const checks: Array<[string, boolean, number]> = [
    [`switchboard alert instances = ${fingerprints}`, Number(rows.n) === fingerprints, Number(rows.n)],
    [`switchboard all firing = ${fingerprints}`, Number(firing.n) === fingerprints, Number(firing.n)],
    [`switchboard sum(occurrence_count) = alerts accepted (${acceptedAlerts.switchboard})`, sum === acceptedAlerts.switchboard, sum],
    [`switchboard payloads counted = payloads accepted (${acceptedPayloads.switchboard})`, Number(payloads.n) === acceptedPayloads.switchboard, Number(payloads.n)],
  ];
  if (anchorOn) {
    const held = await alertmanagerUpdates();
    checks.push([`alertmanager holds ${fingerprints} alerts`, held.size === fingerprints, held.size]);
  }
  for (const [what, ok, got] of checks) console.log(`check     ${ok ? 'ok  ' : 'FAIL'} ${what} (got ${got})`);
  const leaked = Number(payloads.n) - acceptedPayloads.switchboard;
  if (leaked > 0) {
    console.log(
      `          ${leaked} payloads more written than accepted: an attempt answered with an error was written and was not recognised when its retry was written too (their alerts counted twice)`,
    );
  }
  console.log(`ceiling   switchboard ${ceiling.switchboard} alerts/s${anchorOn ? `, alertmanager ${ceiling.alertmanager} alerts/s` : ''} (highest step held)`);
  if (anchorOn) {
    const ratio = ceiling.alertmanager ? ceiling.switchboard! / ceiling.alertmanager : NaN;
    console.log(`ratio     ceiling switchboard / alertmanager = ${ratio.toFixed(2)}; baseline p99 switchboard ${baselineP99.switchboard?.toFixed(1)} ms, alertmanager ${baselineP99.alertmanager?.toFixed(1)} ms`);
    const met = ceiling.switchboard! > 0 && ceiling.switchboard! >= ceiling.alertmanager!;
    console.log(`target    switchboard ceiling >= alertmanager's: ${met ? 'met' : 'NOT met'}; ${loadavg()}`);
  }
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
} finally {
  agent.destroy();
  await stopChildren([...children, ...(alertmanager ? [alertmanager] : [])]);
  await closeQueues();
  await closeDb();
  await dropDatabase(database);
  await deleteKeysWithPrefix(prefix);
  rmSync(amDir, { recursive: true, force: true });
}
