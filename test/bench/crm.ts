/**
 * npm run bench:crm — 100,000 leads through POST /api/v1/webhooks/leads/batch in batches of 1,000,
 * sent open-loop at a fixed rate (BENCH_RATE batches/s, default 25), against the API started in
 * this process and the worker role as a child process (`tsx workers/main.ts`, as the Procfile runs
 * them; BENCH_WORKERS=inprocess runs them in this process instead), on a scratch database cloned
 * from the migrated template and an own queue prefix. Prints leads/s, per-batch latency percentiles and, in the same run, a baseline:
 * the same rows inserted straight into Postgres (another scratch clone) by multi-row INSERTs of
 * 1,000 rows, with BENCH_BASELINE_CONCURRENCY (default: the crm queue's concurrency) in flight.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { percentile } from './percentile.js';

const TOTAL = Number(process.env.BENCH_LEADS ?? 100_000);
const BATCH = 1_000;
const RATE = Number(process.env.BENCH_RATE ?? 25);
const WORKERS_IN_PROCESS = process.env.BENCH_WORKERS === 'inprocess';

const { ensureTemplate, cloneTemplate, dropDatabase, serverUrl } = await import('../helpers/databases.js');
const template = await ensureTemplate();
const webhookDb = await cloneTemplate(template);
const baselineDb = await cloneTemplate(template);
const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
Object.assign(process.env, {
  DATABASE_URL: serverUrl(webhookDb),
  QUEUE_PREFIX: prefix,
  NODE_ENV: 'test',
  WORKER_METRICS_PORT: '0',
  CRM_BATCH_WAIT_MS: '600000', // the benchmark measures written leads: every answer must be the outcome
  CRM_BATCH_MAX: String(BATCH),
  BODY_LIMIT: '5mb',
});

const { startServer } = await import('../../api/server.js');
(await import('../../shared/tool-catalog.js')).loadToolCatalog();
const { startWorkers } = await import('../../workers/runner.js');
const { handlers } = await import('../../workers/registry.js');
const { registry, closeQueues } = await import('../../shared/queues.js');
const { db, closeDb, knexOptions } = await import('../../shared/db/index.js');
const { shutdown, onShutdown } = await import('../../shared/lifecycle.js');
const knexFactory = (await import('knex')).default;
// The baseline gets as many inserts in flight as the crm queue runs jobs at once.
const BASELINE_CONCURRENCY = Number(process.env.BENCH_BASELINE_CONCURRENCY ?? (await import('../../shared/queues.js')).queueDefinitions.crm.concurrency);

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function makeLeads(run: string) {
  const sources = ['website', 'linkedin', 'referral', 'trade_show', 'cold_call', 'email_campaign', 'social_media', 'webinar'];
  return Array.from({ length: TOTAL }, (_, i) => ({
    first_name: `First${i}`,
    last_name: `Last${i % 997}`,
    email: `lead${i}.${run}@example${i % 50}.com`,
    phone: `+1555${String(i).padStart(7, '0')}`,
    company: `Company ${i % 5000}`,
    title: 'Head of Operations',
    source: sources[i % sources.length]!,
    source_detail: `form-${i % 20}`,
    estimated_value: String(1000 + (i % 100) * 250),
    notes: 'Requested a callback about pricing.',
    custom_data: { utm_campaign: `c${i % 10}`, score: i % 100 },
  }));
}

const run = randomBytes(3).toString('hex');
const leads = makeLeads(run);
const batches = Array.from({ length: TOTAL / BATCH }, (_, b) => leads.slice(b * BATCH, (b + 1) * BATCH));

/** The worker role as a child process; resolves once it reports its workers running. */
function startWorkerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('workers running')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}): ${out.slice(-2000)}`)));
  });
}

let workerProcess: ChildProcess | undefined;
try {
  // --- through the webhook ------------------------------------------------------------
  if (WORKERS_IN_PROCESS) {
    const workers = startWorkers(registry, handlers);
    onShutdown('workers', () => Promise.all(workers.map((w) => w.close())));
  } else {
    workerProcess = await startWorkerProcess();
  }
  const { url } = await startServer(0, '127.0.0.1');
  // Warm-up (connections, JIT) outside the measurement, with its own rows.
  const warm = await fetch(`${url}/api/v1/webhooks/leads/batch`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ leads: makeLeads(`${run}w`).slice(0, BATCH) }) });
  if (warm.status !== 200) throw new Error(`warm-up failed: ${warm.status} ${await warm.text()}`);

  // Bodies are serialised before the clock starts: the load generator shares this process with the API.
  const bodies = batches.map((batch) => JSON.stringify({ leads: batch }));
  const latencies: number[] = [];
  let created = 0;
  const started = performance.now();
  const sends = bodies.map(
    (body, i) =>
      new Promise<void>((resolve, reject) => {
        setTimeout(async () => {
          const t0 = performance.now();
          try {
            const res = await fetch(`${url}/api/v1/webhooks/leads/batch`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
            const answer = (await res.json()) as { created: number };
            if (res.status !== 200) throw new Error(`batch ${i}: ${res.status} ${JSON.stringify(answer)}`);
            created += answer.created;
            latencies.push(performance.now() - t0);
            resolve();
          } catch (err) {
            reject(err);
          }
        }, (i * 1000) / RATE);
      }),
  );
  await Promise.all(sends);
  const webhookSeconds = (performance.now() - started) / 1000;
  const stored = Number((await db()('crm_leads').where('email', 'like', `%.${run}@%`).count<{ count: number }[]>('* as count'))[0]!.count);
  if (created !== TOTAL || stored !== TOTAL) throw new Error(`expected ${TOTAL} leads, responses said ${created}, database has ${stored}`);
  const webhookRate = TOTAL / webhookSeconds;
  latencies.sort((a, b) => a - b);

  // --- baseline: the same rows, multi-row INSERT straight into Postgres ---------------------
  const baseline = knexFactory(knexOptions(serverUrl(baselineDb), BASELINE_CONCURRENCY));
  await baseline.raw('select 1');
  const rows = batches.map((batch) => batch.map((l) => ({ ...l, custom_data: JSON.stringify(l.custom_data) })));
  const b0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: BASELINE_CONCURRENCY }, async () => {
      while (next < rows.length) await baseline('crm_leads').insert(rows[next++]!);
    }),
  );
  const baselineSeconds = (performance.now() - b0) / 1000;
  const baselineStored = Number((await baseline('crm_leads').count<{ count: number }[]>('* as count'))[0]!.count);
  await baseline.destroy();
  if (baselineStored !== TOTAL) throw new Error(`baseline stored ${baselineStored}`);
  const baselineRate = TOTAL / baselineSeconds;

  console.log(`crm batch webhook: ${fmt(TOTAL)} leads in ${TOTAL / BATCH} batches of ${fmt(BATCH)}, offered open-loop at ${RATE} batches/s (${fmt(RATE * BATCH)} leads/s); workers ${WORKERS_IN_PROCESS ? 'in process' : 'in a child process'}`);
  console.log(`  webhook → queue → worker → Postgres: ${webhookSeconds.toFixed(2)} s, ${fmt(webhookRate)} leads/s`);
  console.log(`  batch latency ms: p50 ${fmt(percentile(latencies, 50))}  p90 ${fmt(percentile(latencies, 90))}  p99 ${fmt(percentile(latencies, 99))}  max ${fmt(latencies.at(-1)!)}`);
  console.log(`  baseline (multi-row INSERT of ${fmt(BATCH)} rows, ${BASELINE_CONCURRENCY} in flight): ${baselineSeconds.toFixed(2)} s, ${fmt(baselineRate)} leads/s`);
  console.log(`  ratio webhook / baseline: ${(webhookRate / baselineRate).toFixed(2)} (target ≥ 0.5)`);
} finally {
  if (workerProcess && workerProcess.exitCode === null) {
    const exited = new Promise((resolve) => workerProcess!.once('exit', resolve));
    workerProcess.kill('SIGTERM');
    await exited;
  }
  await shutdown();
  await closeQueues();
  await closeDb();
  await dropDatabase(webhookDb);
  await dropDatabase(baselineDb);
  await deleteKeysWithPrefix(prefix);
}
