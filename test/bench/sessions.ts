/**
 * npm run bench:sessions — the real-time path under load.
 *
 * Starts its own database (cloned from the migrated template), queue prefix, API process and
 * worker process; opens 1,000 SSE subscribers (4 channels on each of 250 sessions) with the lean
 * subscriber of ./sse-subscriber.ts (node:http + eventsource-parser); publishes messages over
 * HTTP open-loop at a fixed rate after a warm-up; and measures publish→delivery latency per
 * delivered event, delivered events/s, lost deliveries and the API's RSS. Then, in the same run, a
 * baseline: the same number of single-row Postgres inserts each followed by a Redis PUBLISH (no
 * HTTP, no queue) at the same rate, received by one subscriber.
 *
 *   BENCH_RATE=300 BENCH_SECONDS=10   rate and duration (default 500/s for 30 s)
 *   BENCH_WARMUP_SECONDS=5            load at the same rate before the measured window (default 5; 0 for none)
 *   BENCH_PROF=<dir>                  V8 CPU profiles of the roles
 *   BENCH_NODE_FLAGS="…"             extra Node flags for the roles (after those of shared/cli/roles.ts)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import knexFactory from 'knex';
import { cloneTemplate, dropDatabase, ensureTemplate, serverUrl } from '../helpers/databases.js';
import { deleteKeysWithPrefix, redisAddress } from '../helpers/redis-keys.js';
import { cpuSnapshot, cpuUsed, processCpuSeconds } from './machine-cpu.js';
import { percentile } from './percentile.js';
import { subscribeSse, type SseSubscription } from './sse-subscriber.js';
import { roleNodeFlags } from '../../shared/cli/roles.js';

const SESSIONS = 250;
const CHANNELS = ['voice', 'chat', 'sms', 'slack'] as const;
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const TOTAL = RATE * SECONDS;
/** Seconds of the same load before the measured window, so JIT compilation and cold caches of a fresh start are not measured (printed apart). */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const API_KEY = 'bench-key';

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}


/** Starts a role as a child process with the roles' Node flags; BENCH_PROF=<dir> writes a V8 CPU profile of each role there. */
function startRole(entry: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; line: string }> {
  const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, ...roleNodeFlags, ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (ready.test(line)) {
        clearTimeout(timer);
        resolve({ child, line });
      }
    });
    child.on('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}

/** Runs `op(i)` for i in 0..total-1 at `rate` per second from a fixed schedule (open loop). */
async function openLoop(total: number, rate: number, op: (i: number) => Promise<void>): Promise<{ lateMs: number }> {
  const start = now();
  const pending: Promise<void>[] = [];
  let maxLate = 0;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
    maxLate = Math.max(maxLate, now() - due);
    pending.push(op(i));
  }
  await Promise.all(pending);
  return { lateMs: maxLate };
}

async function main() {
  const template = await ensureTemplate();
  const database = await cloneTemplate(template);
  const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: serverUrl(database),
    QUEUE_PREFIX: prefix,
    API_KEYS: API_KEY,
    SERVICE_SESSION_SYSTEM: 'true',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    WORKER_METRICS_PORT: '0',
  };
  const children: ChildProcess[] = [];
  const redis = new Redis({ host: env.BUS_HOST ?? '127.0.0.1', port: Number(env.BUS_PORT ?? 6379), password: env.BUS_PASSWORD || undefined });
  const sources: SseSubscription[] = [];
  try {
    const { child: apiChild, line } = await startRole('api/main.ts', env, /API listening/);
    children.push(apiChild);
    const url = /"url":"([^"]+)"/.exec(line)![1]!;
    const { child: workerChild } = await startRole('workers/main.ts', env, /workers running/);
    const metricsText = async (u: string) => (await fetch(u)).text();
    /** Mean of a Prometheus histogram over the series whose labels contain `match`. */
    const histogramMean = (text: string, name: string, match: string) => {
      const pick = (suffix: string) =>
        text.split('\n').filter((l) => l.startsWith(`${name}_${suffix}{`) && l.includes(match)).reduce((a, l) => a + Number(l.split(' ').pop()), 0);
      return (pick('sum') / pick('count')) * 1000;
    };
    children.push(workerChild);
    // Plain node:http with a keep-alive agent for the publishing side.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    const call = (path: string, body?: unknown) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = http.request(
          url + path,
          {
            agent,
            method: body === undefined ? 'GET' : 'POST',
            headers: { 'X-API-Key': API_KEY, ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });

    // 250 users, each with a session and one interaction per channel.
    const sessions: Array<{ id: string; interactions: Record<string, string> }> = [];
    for (let i = 0; i < SESSIONS; i++) {
      const user = await call('/api/users', { phone_number: `+1777${String(i).padStart(7, '0')}` });
      const session = await call('/api/sessions/resolve', { user_id: user.body.user_id });
      const interactions: Record<string, string> = {};
      for (const c of CHANNELS) interactions[c] = (await call(`/api/sessions/${session.body.session_id}/interactions`, { channel: c })).body.interaction_id;
      sessions.push({ id: session.body.session_id, interactions });
    }

    // 1,000 SSE subscribers: every channel of every session.
    const latencies: number[] = [];
    const seen = new Set<string>();
    const warmSeen = new Set<string>();
    const warmLatencies: number[] = [];
    let duplicates = 0;
    let foreign = 0;
    let dropped = 0;
    const opened: Promise<void>[] = [];
    const perSession = Number(process.env.BENCH_SUBSCRIBERS_PER_SESSION ?? CHANNELS.length);
    for (const s of sessions) {
      for (const c of CHANNELS.slice(0, perSession)) {
        const onEvent = (e: { data: string }) => {
          const received = now();
          const envelope = JSON.parse(e.data);
          if (envelope.event_type !== 'MESSAGE') return;
          const { k, sent, warm } = envelope.data.metadata as { k: number; sent: number; warm?: true };
          if (warm) {
            warmSeen.add(`${k}:${c}`);
            warmLatencies.push(received - sent);
            return;
          }
          if (envelope.channel === c) foreign++;
          const key = `${k}:${c}`;
          if (seen.has(key)) duplicates++;
          else {
            seen.add(key);
            latencies.push(received - sent);
          }
        };
        const subscription = subscribeSse(`${url}/api/sessions/${s.id}/events?channel=${c}`, { 'X-API-Key': API_KEY }, onEvent, () => dropped++);
        opened.push(subscription.opened);
        sources.push(subscription);
      }
    }
    await Promise.all(opened);
    console.log(`setup: ${SESSIONS} sessions, ${sources.length} SSE subscribers open; publishing ${RATE} msg/s for ${SECONDS} s over HTTP…`);

    /** Message i: session i mod 250, channels in turn; `warm` marks the warm-up's messages. */
    const channelOf = (i: number) => CHANNELS[Math.floor(i / SESSIONS) % CHANNELS.length]!;
    const publish = (i: number, warm: boolean) => {
      const s = sessions[i % SESSIONS]!;
      const channel = channelOf(i);
      return call(`/api/sessions/${s.id}/messages`, {
        channel,
        role: i % 2 ? 'assistant' : 'user',
        content: `bench message ${i}`,
        interaction_id: s.interactions[channel],
        metadata: warm ? { k: i, sent: now(), warm } : { k: i, sent: now() },
      }).catch(() => ({ status: 0, body: null }));
    };

    /** 200 (persisted and published) and 202 (persisted later) both accept a message; anything else, or no answer (0), does not. */
    const isAccepted = (status: number) => status === 200 || status === 202;

    let warmRejected = 0;
    if (WARMUP > 0) {
      await openLoop(WARMUP * RATE, RATE, async (i) => {
        if (!isAccepted((await publish(i, true)).status)) warmRejected++;
      });
      const warmExpected = (WARMUP * RATE - warmRejected) * (CHANNELS.length - 1);
      for (let waited = 0; warmSeen.size < warmExpected && waited < 30_000; waited += 100) await sleep(100);
      warmLatencies.sort((a, b) => a - b);
      console.log(
        `warm-up: ${WARMUP} s at ${RATE} msg/s (not counted below): p50 ${fmt(percentile(warmLatencies, 50))} ms, p99 ${fmt(percentile(warmLatencies, 99))} ms, ` +
          `max ${fmt(warmLatencies.at(-1) ?? NaN)} ms; ${warmSeen.size} of ${warmExpected} deliveries; POST non-2xx ${warmRejected}`,
      );
    }

    const postLatencies: number[] = [];
    let rejected = 0;
    const acceptedMessages: Array<{ k: number; channel: string }> = [];
    let accepted202 = 0;
    const t0 = now();
    const machineBefore = cpuSnapshot();
    const cpuBefore = { api: processCpuSeconds(apiChild.pid!), workers: processCpuSeconds(workerChild.pid!), bench: process.cpuUsage() };
    const load = await openLoop(TOTAL, RATE, async (i) => {
      const postStart = now();
      const res = await publish(i, false);
      postLatencies.push(now() - postStart);
      if (res.status === 202) accepted202++;
      if (isAccepted(res.status)) acceptedMessages.push({ k: i, channel: channelOf(i) });
      else rejected++;
    });
    const expected = TOTAL * (CHANNELS.length - 1);
    const expectedAccepted = acceptedMessages.length * (CHANNELS.length - 1);
    for (let waited = 0; seen.size < expectedAccepted && waited < 30_000; waited += 100) await sleep(100);
    const machineCpu = cpuUsed(machineBefore, cpuSnapshot());
    const lostAccepted = acceptedMessages.reduce((n, m) => n + CHANNELS.filter((c) => c !== m.channel && !seen.has(`${m.k}:${c}`)).length, 0);
    const elapsed = (now() - t0) / 1000;
    const api = rssMb(apiChild.pid!);
    const benchCpu = process.cpuUsage(cpuBefore.bench);
    // The worker's metrics port is random (WORKER_METRICS_PORT=0); ask the process which one it listens on.
    const apiMetrics = await metricsText(`${url}/metrics`);
    const postMean = histogramMean(apiMetrics, 'http_request_duration_seconds', 'route="/api/sessions/:session_id/messages"');
    const cpu = {
      api: processCpuSeconds(apiChild.pid!) - cpuBefore.api,
      workers: processCpuSeconds(workerChild.pid!) - cpuBefore.workers,
      bench: (benchCpu.user + benchCpu.system) / 1e6,
    };
    latencies.sort((a, b) => a - b);
    const ours = {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      delivered: seen.size,
      perSecond: seen.size / elapsed,
      lost: expected - seen.size,
    };
    for (const es of sources) es.close();

    // Baseline: insert one row, then PUBLISH it; one subscriber receives every message.
    const knex = knexFactory({ client: 'pg', connection: serverUrl(database), pool: { min: 0, max: 10 } });
    await knex.raw('create table bench_baseline (id uuid primary key default gen_random_uuid(), session_id uuid not null, payload jsonb not null, created_at timestamptz not null default now())');
    const sub = new Redis({ host: env.BUS_HOST ?? '127.0.0.1', port: Number(env.BUS_PORT ?? 6379), password: env.BUS_PASSWORD || undefined });
    const baseLat: number[] = [];
    sub.on('pmessage', (_p: string, _c: string, raw: string) => {
      const { sent } = JSON.parse(raw) as { sent: number };
      baseLat.push(now() - sent);
    });
    await sub.psubscribe(`${prefix}:baseline:*`);
    console.log(`baseline: ${TOTAL} single-row inserts each followed by PUBLISH, ${RATE}/s…`);
    const b0 = now();
    await openLoop(TOTAL, RATE, async (i) => {
      const s = sessions[i % SESSIONS]!;
      const payload = { k: i, sent: now(), content: `bench message ${i}` };
      await knex('bench_baseline').insert({ session_id: s.id, payload: JSON.stringify(payload) });
      await redis.publish(`${prefix}:baseline:${s.id}`, JSON.stringify(payload));
    });
    for (let waited = 0; baseLat.length < TOTAL && waited < 15_000; waited += 100) await sleep(100);
    const baseElapsed = (now() - b0) / 1000;
    baseLat.sort((a, b) => a - b);
    const base = { p50: percentile(baseLat, 50), p95: percentile(baseLat, 95), p99: percentile(baseLat, 99), perSecond: baseLat.length / baseElapsed, lost: TOTAL - baseLat.length };
    sub.disconnect();
    await knex.destroy();

    const messagesPerSecond = ours.delivered / (CHANNELS.length - 1) / elapsed;
    console.log('');
    console.log(`sessions bench: ${sources.length} SSE subscribers over ${SESSIONS} sessions, ${RATE} msg/s open loop for ${SECONDS} s (${TOTAL} messages, ${expected} expected deliveries)`);
    console.log(`  publish→delivery latency  p50 ${fmt(ours.p50)} ms   p95 ${fmt(ours.p95)} ms   p99 ${fmt(ours.p99)} ms`);
    console.log(`  delivered events/s        ${fmt(ours.perSecond)} (${ours.delivered} deliveries, ${fmt(messagesPerSecond)} messages/s)`);
    console.log(`  lost                      ${ours.lost} of ${expected} deliveries; of messages the API accepted (200/202): ${lostAccepted} lost`);
    console.log(`                            duplicates ${duplicates}   own-channel deliveries ${foreign}   POST non-2xx ${rejected}   202s ${accepted202}   max schedule lag ${fmt(load.lateMs)} ms   streams dropped ${dropped}`);
    postLatencies.sort((a, b) => a - b);
    console.log(`  POST round trip           p50 ${fmt(percentile(postLatencies, 50))} ms   p99 ${fmt(percentile(postLatencies, 99))} ms (answers after persist + publish)`);
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(apiMetrics)?.[1] ?? NaN) * 1000;
    console.log(`  API mean time in POST handler ${fmt(postMean)} ms; API event-loop delay p99 ${fmt(gauge('nodejs_eventloop_lag_p99_seconds'))} ms, max ${fmt(gauge('nodejs_eventloop_lag_max_seconds'))} ms`);
    console.log(`  CPU during the run        API ${fmt(cpu.api)} s, workers ${fmt(cpu.workers)} s, load generator + SSE clients ${fmt(cpu.bench)} s (${fmt(((cpu.api + cpu.workers) * 1000) / TOTAL)} ms of API+worker CPU per message)`);
    console.log(
      `  machine during the run    ${fmt(machineCpu.busyShare * 100)}% busy, ${fmt(machineCpu.stealShare * 100)}% stolen by the host; Postgres ${fmt(machineCpu.used.postgres!)} s, Redis ${fmt(machineCpu.used.redis!)} s ` +
        `(${fmt(((cpu.api + cpu.workers + machineCpu.used.postgres! + machineCpu.used.redis!) * 1000) / TOTAL)} ms of API+worker+Postgres+Redis CPU per message)`,
    );
    console.log(`  API process RSS           ${fmt(api.rss)} MB (peak ${fmt(api.peak)} MB)`);
    console.log(`baseline (insert + PUBLISH, no HTTP, no queue), same rate and count`);
    console.log(`  insert→receive latency    p50 ${fmt(base.p50)} ms   p95 ${fmt(base.p95)} ms   p99 ${fmt(base.p99)} ms`);
    console.log(`  received messages/s       ${fmt(base.perSecond)}   lost ${base.lost}`);
    console.log(`ratio ours/baseline (messages/s delivered)     ${(messagesPerSecond / base.perSecond).toFixed(2)}`);
    console.log(`ratio ours/baseline (speed = baseline p99 / ours p99)  ${(base.p99 / ours.p99).toFixed(2)}   p50: ${(base.p50 / ours.p50).toFixed(2)}`);
    console.log(`targets: p99 ≤ 25 ms ${ours.p99 <= 25 ? 'met' : 'MISSED'}; 0 lost ${ours.lost === 0 ? 'met' : 'MISSED'}; ratio ≥ 0.4 (messages/s) ${messagesPerSecond / base.perSecond >= 0.4 ? 'met' : 'MISSED'}`);
  } finally {
    for (const es of sources) es.close();
    redis.disconnect();
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await dropDatabase(database);
    await deleteKeysWithPrefix(prefix, redisAddress(env));
  }
}

await main();
process.exit(0);
