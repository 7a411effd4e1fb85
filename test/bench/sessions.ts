/**
 * npm run bench:sessions — the real-time path under load, beside nchan in the same run.
 *
 * Switchboard: its own database (cloned from the migrated template), queue prefix, API and worker;
 * 250 sessions with 4 channels each, set up over HTTP; then the platform is stopped and started
 * again, so the measured load meets a cold process: the bench waits for /readyz 200, opens 1,000
 * SSE subscribers (every channel of every session) with the lean client of ./sse-subscriber.ts, and
 * publishes messages over HTTP open-loop. A message of one channel reaches the session's 3 other
 * channels. The first BENCH_COLD_SECONDS of load are printed apart from the rest.
 *
 * nchan (./nchan.ts): nginx + nchan with Redis storage, worker_processes 2 (the machine's 2 cores, and
 * switchboard's 2 role processes); the same 1,000 subscribers, client, message bodies and open-loop
 * rates, and the same fan-out: each message is published once and delivered to 3 subscribers.
 *
 * Both sides count deliveries the same way: a delivery is (message, subscribing channel), expected
 * 3 per message offered; lost = expected − delivered (a rejected POST loses its 3); latency is the
 * publisher's clock at POST to the subscriber's at parse, both in this process. Each step also prints
 * the CPU each process spent per message and how long the main threads of the roles (nginx's workers)
 * and of Redis waited, runnable, for one of the 2 cores: a wait there is added to the tail latency
 * whatever the code does. Under BENCH_START=roles, switchboard's steps also print how many session
 * lane jobs the worker ran, and so how many messages shared each job's fixed queue cost.
 *
 *   BENCH_RATE=500 BENCH_SECONDS=30    one step per side (the defaults)
 *   BENCH_RATES=500,1000               steps at these rates, both sides alternating per rate
 *   BENCH_RAMP=1                       steps 500, 750, 1000, 1500, 2000, 3000, 4000, 5000 msg/s of 15 s;
 *                                      a side stops after its second failed step; prints the highest rate
 *                                      held (p99 < 100 ms, nothing lost) of each side and their ratio
 *   BENCH_SIDES=switchboard,nchan      which sides (add `insert-publish` for the raw INSERT + PUBLISH floor)
 *   BENCH_COLD_SECONDS=10              the window after start printed apart (0: no cold start, no restart)
 *   BENCH_TIMELINE_SECONDS=20          after a cold start, per second of that many: p50/p99 of the messages sent
 *                                      in it, CPU of the roles and Postgres, connections, the API's event-loop delay,
 *                                      the lane queues' waiting / active jobs, the machine's I/O wait and steal
 *   BENCH_START=roles|start|dev        how the platform starts: the role entry files under tsx (default),
 *                                      `npm start` (compiled: run `npm run build` first) or `npm run dev`
 *   BENCH_TARGET=http://host:port      an already running platform instead (BENCH_API_KEY, default dev-key);
 *                                      its data stays; no restart, so "cold" is only what is left of it
 *   BENCH_REDIS=appendonly             a Redis of the run's own with production persistence (appendonly yes,
 *                                      appendfsync everysec) on a free port, instead of the one at BUS_PORT
 *   BENCH_PROF=<dir>                   V8 CPU profiles of the roles (BENCH_START=roles)
 *   BENCH_NODE_FLAGS="…"              extra Node flags for the roles (BENCH_START=roles)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import knexFactory from 'knex';
import { serverUrl } from '../helpers/databases.js';
import { freePort } from '../helpers/ports.js';
import { redisAddress } from '../helpers/redis-keys.js';
import { benchStorage, fmt, httpCaller, inPool, loadavg, now, roleEnv, rssMb, runSecret, sleep, startRole, stopProcesses, waitForReady } from './bench-platform.js';
import { cpuSnapshot, cpuUsed, type CpuSnapshot } from './machine-cpu.js';
import { childrenOf, startNchan, type Nchan } from './nchan.js';
import { percentile } from './percentile.js';
import { subscribeSse, type SseSubscription } from './sse-subscriber.js';
import { startTimeline, timelineLines } from './timeline.js';
import { roundTripsBetween, segmentSnapshot } from './round-trips.js';

const SESSIONS = 250;
const CHANNELS = ['voice', 'chat', 'sms', 'slack'] as const;
const FANOUT = CHANNELS.length - 1;
const RAMP = process.env.BENCH_RAMP === '1';
const RATES = (process.env.BENCH_RATES ?? (RAMP ? '500,750,1000,1500,2000,3000,4000,5000' : (process.env.BENCH_RATE ?? '500'))).split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? (RATES.length > 1 ? 15 : 30));
const COLD = Number(process.env.BENCH_COLD_SECONDS ?? 10);
const TIMELINE = Number(process.env.BENCH_TIMELINE_SECONDS ?? 20);
const SIDES = (process.env.BENCH_SIDES ?? 'switchboard,nchan').split(',') as Side[];
const TARGET = process.env.BENCH_TARGET?.replace(/\/+$/, '');
const START = (process.env.BENCH_START ?? 'roles') as 'roles' | 'start' | 'dev';
const API_KEY = TARGET ? (process.env.BENCH_API_KEY ?? 'dev-key') : runSecret('key');
const NGINX_WORKERS = 2;
/** Seconds of no traffic, streams open, over which each role's CPU is printed before the load (0: none). */
const IDLE = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const POSTGRES_PORT = 5432;
const redisPort = () => Number(process.env.BUS_PORT ?? 6379);
/** A step holds its rate when p99 is under this and nothing is lost. */
const HELD_P99_MS = 100;
/** Failed steps after which a side stops climbing. */
const MAX_FAILURES = 2;

type Side = 'switchboard' | 'nchan' | 'insert-publish';

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

/** Every descendant of a process (the roles under `npm start`/`npm run dev`, tsx's helpers). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const child of childrenOf(pid)) out.push(child, ...descendants(child));
  return out;
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** A running platform: its URL, and its processes by role (api, worker, other) for CPU accounting. */
interface Platform {
  url: string;
  apiPid?: number;
  /** The worker's /metrics (BENCH_START=roles: the worker says where in its start-up line). */
  workerMetricsUrl?: string;
  groups(): Record<string, number[]>;
  stop(): Promise<void>;
}

/** Starts the platform the way BENCH_START says, and waits for /readyz 200; resolves with the moment of readiness. */
async function startPlatform(env: NodeJS.ProcessEnv): Promise<{ platform: Platform; ready: number; started: number }> {
  const started = now();
  if (START === 'roles') {
    const { child: api, line } = await startRole('api/main.ts', env, /API listening/);
    const url = /"url":"([^"]+)"/.exec(line)![1]!;
    const { child: worker, line: workerLine } = await startRole('workers/main.ts', env, /workers running/);
    const workerMetricsUrl = /"metrics":"([^"]+)"/.exec(workerLine)?.[1];
    const ready = await waitForReady(`${url}/readyz`);
    return {
      started,
      ready,
      platform: { url, apiPid: api.pid, workerMetricsUrl, groups: () => ({ api: [api.pid!, ...descendants(api.pid!)], worker: [worker.pid!, ...descendants(worker.pid!)] }), stop: () => stopProcesses([api, worker]) },
    };
  }
  const port = await freePort();
  // npm start runs roleEnv's development start with real credentials: production needs a real identity provider and https.
  const launchEnv: NodeJS.ProcessEnv = { ...env, PORT: String(port), ...(START === 'dev' ? { NODE_ENV: 'development' } : {}) };
  let launcher: ChildProcess;
  if (START === 'start') {
    if (!existsSync('dist/shared/cli/start.js')) throw new Error('BENCH_START=start runs the compiled platform: npm run build first');
    launcher = spawn(process.execPath, ['dist/shared/cli/start.js'], { env: launchEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    Object.assign(launchEnv, { DEV_OIDC_PORT: String(await freePort()), MCP_SERVICE_PORT: String(await freePort()) });
    launcher = spawn(process.execPath, ['--import', 'tsx', 'shared/cli/dev.ts'], { env: launchEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const url = `http://127.0.0.1:${port}`;
  const ready = await waitForReady(`${url}/readyz`);
  const groups = () => {
    const all = descendants(launcher.pid!);
    const role = (name: string) => all.filter((p) => commandLine(p).includes(name));
    const api = role('api/main');
    const worker = role('workers/main');
    const apiFamily = api.flatMap((p) => [p, ...descendants(p)]);
    const workerFamily = worker.flatMap((p) => [p, ...descendants(p)]);
    return { api: apiFamily, worker: workerFamily, other: [launcher.pid!, ...all.filter((p) => !apiFamily.includes(p) && !workerFamily.includes(p))] };
  };
  return { started, ready, platform: { url, apiPid: groups().api[0], groups, stop: () => stopProcesses([launcher]) } };
}

/**
 * Sums CPU seconds per group of pids between two snapshots, and Postgres's: only the backends of
 * this run's database when it has one (the machine's other Postgres users are not ours), else all.
 */
function groupCpu(before: CpuSnapshot, after: CpuSnapshot, groups: Record<string, number[]>, database?: string): Record<string, number> {
  const used = cpuUsed(before, after).used;
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(groups)) out[name] = pids.reduce((s, p) => s + (used[String(p)] ?? 0), 0);
  const backends = Object.entries(after.servicePids.postgres ?? {}).filter(([pid]) => !database || commandLine(Number(pid)).includes(` ${database} `));
  out.postgres = backends.reduce((s, [pid, seconds]) => s + seconds - (before.servicePids.postgres?.[pid] ?? 0), 0);
  out.redis = used.redis ?? 0;
  return out;
}

/**
 * Session lane jobs the worker has run so far, completed or failed (its queue_job_duration_seconds
 * count of stream.deliver), or undefined without its /metrics. Messages per job tell how much of the
 * queue's fixed cost per job (its Redis scripts, the worker's fetch and finish) each message bears.
 */
async function laneJobsDone(workerMetricsUrl: string | undefined): Promise<number | undefined> {
  if (!workerMetricsUrl) return undefined;
  const text = await fetch(workerMetricsUrl).then((r) => r.text(), () => '');
  // The lane job is stream.deliver (sessions.deliver-batch before the stream had its room); its label job_name (job before).
  const counts = [...text.matchAll(/^switchboard_queue_job_duration_seconds_count\{[^}]*job(?:_name)?="(?:stream\.deliver|sessions\.deliver-batch)"[^}]*\} (\d+)/gm)];
  return counts.length ? counts.reduce((sum, m) => sum + Number(m[1]), 0) : undefined;
}

/** Transactions committed in a database so far (pg_stat_database; its counters are flushed about once a second). */
async function commitsSoFar(database: string | undefined): Promise<number | undefined> {
  if (!database) return undefined;
  const knex = knexFactory({ client: 'pg', connection: serverUrl('postgres'), pool: { min: 0, max: 1 } });
  try {
    const row = await knex('pg_stat_database').select('xact_commit').where({ datname: database }).first();
    return row ? Number(row.xact_commit) : undefined;
  } finally {
    await knex.destroy();
  }
}

/** Run-queue delay of each group's main threads between two snapshots (summed over its processes), and Redis'. */
function runQueueWaits(before: CpuSnapshot, after: CpuSnapshot, groups: Record<string, number[]>): Record<string, number> {
  const delta = (key: string) => (after.waited[key] ?? 0) - (before.waited[key] ?? 0);
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(groups)) if (name !== 'other') out[name] = pids.reduce((s, p) => s + delta(String(p)), 0);
  out.redis = delta('redis');
  return out;
}

interface Delivery {
  sent: number;
  latency: number;
}

/** What one step of one side collects: deliveries keyed by message and subscribing channel. */
class Step {
  readonly seen = new Set<string>();
  readonly deliveries: Delivery[] = [];
  duplicates = 0;
  ownChannel = 0;
  rejected = 0;
  /** Non-2xx answers by status (0: no answer). */
  readonly refusals = new Map<number, number>();
  postLatencies: number[] = [];
  constructor(readonly id: number) {}
  receive(k: number, channel: string, from: string, sent: number, received: number) {
    if (from === channel) this.ownChannel++;
    const key = `${k}:${channel}`;
    if (this.seen.has(key)) this.duplicates++;
    else {
      this.seen.add(key);
      this.deliveries.push({ sent, latency: received - sent });
    }
  }
}

interface Summary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  count: number;
}

function summarize(latencies: number[]): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN, count: sorted.length };
}

const line = (s: Summary) => `p50 ${fmt(s.p50).padStart(6)}  p95 ${fmt(s.p95).padStart(6)}  p99 ${fmt(s.p99).padStart(6)}  max ${fmt(s.max).padStart(6)} ms`;

interface StepResult {
  side: Side;
  rate: number;
  all: Summary;
  cold?: { first: Summary; rest: Summary };
  delivered: number;
  expected: number;
  lost: number;
  rejected: number;
  held: boolean;
  cpuPerMessage: Record<string, number>;
  lateMs: number;
}

/** Sessions of the switchboard side: ids and the interaction of each channel. */
type Sessions = Array<{ id: string; interactions: Record<string, string> }>;

async function setupSessions(call: ReturnType<typeof httpCaller>['call']): Promise<Sessions> {
  const sessions: Sessions = [];
  const run = Math.floor(Math.random() * 1e6);
  for (let i = 0; i < SESSIONS; i++) {
    // A running platform (BENCH_TARGET) keeps its users: numbers of this run only.
    const user = await call('/api/users', { phone_number: `+1777${String(run).padStart(6, '0')}${String(i).padStart(3, '0')}`.slice(0, 16) });
    if (!user.body?.user_id) throw new Error(`POST /api/users: HTTP ${user.status} ${JSON.stringify(user.body)}`);
    const session = await call('/api/sessions/resolve', { user_id: user.body.user_id });
    const interactions: Record<string, string> = {};
    for (const c of CHANNELS) interactions[c] = (await call(`/api/sessions/${session.body.session_id}/interactions`, { channel: c })).body.interaction_id;
    sessions.push({ id: session.body.session_id, interactions });
  }
  return sessions;
}

/** BENCH_REDIS=appendonly: starts redis-server with production persistence on a free port and points this run at it. */
async function ownRedis(): Promise<ChildProcess | undefined> {
  if (process.env.BENCH_REDIS !== 'appendonly') return undefined;
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--dir', dir, '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const probe = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(() => probe.ping(), () => undefined);
    probe.disconnect();
    if (ok === 'PONG') break;
    await sleep(100);
  }
  process.env.BUS_HOST = '127.0.0.1';
  process.env.BUS_PORT = String(port);
  console.log(`Redis of this run: 127.0.0.1:${port}, appendonly yes, appendfsync everysec`);
  return child;
}

async function main() {
  const redisServer = await ownRedis();
  const storage = TARGET ? undefined : await benchStorage();
  const prefix = storage?.prefix ?? `sbbench-target-${Math.floor(Math.random() * 1e9).toString(36)}`;
  const env = storage ? roleEnv(storage.database, storage.prefix, { API_KEYS: API_KEY }) : process.env;
  const cleanups: Array<() => Promise<void>> = [];
  const subscriptions: SseSubscription[] = [];
  const active: Partial<Record<Side, Step>> = {};
  let late = 0;
  /** Parses a delivered event of either side (same envelope) and counts it for the step it belongs to. */
  const onEvent = (side: Side, channel: string) => (e: { data: string }) => {
    const received = now();
    const envelope = JSON.parse(e.data);
    if (envelope.event_type !== 'MESSAGE') return;
    const { step, k, sent } = envelope.data.metadata as { step: number; k: number; sent: number };
    const current = active[side];
    if (!current || current.id !== step) late++;
    else current.receive(k, channel, envelope.channel, sent, received);
  };
  let dropped = 0;
  const onClosed = () => dropped++;
  let platform: Platform | undefined;
  /**
   * Opens a side's subscribers, 50 at a time as clients arriving together would, each retried
   * (up to 10 times, 250 ms apart) when refused; resolves with the number of refusals.
   */
  const openSubscribers = async (side: Side, streams: Array<{ url: string; channel: string }>, headers: Record<string, string>) => {
    let refusals = 0;
    await inPool(streams, 50, async ({ url, channel }) => {
      for (let attempt = 1; ; attempt++) {
        const sub = subscribeSse(url, headers, onEvent(side, channel), onClosed);
        try {
          await sub.opened;
          subscriptions.push(sub);
          return;
        } catch (err) {
          sub.close();
          refusals++;
          if (attempt === 10) throw err;
          await sleep(250);
        }
      }
    });
    return refusals;
  };
  try {
    const sides: Partial<Record<Side, { publish(step: number, i: number): Promise<number>; groups(): Record<string, number[]> }>> = {};
    const loadStart: Partial<Record<Side, number>> = {};
    let readyAt = NaN;
    let startedAt = NaN;
    let apiMetricsUrl: string | undefined;
    let subscribersFrom = NaN;
    let subscribersOpen = NaN;

    // Switchboard: set up the sessions, then (unless told otherwise) restart so the load meets a cold platform.
    let sessions: Sessions = [];
    if (SIDES.includes('switchboard') || SIDES.includes('insert-publish')) {
      let url = TARGET;
      if (!TARGET) {
        const first = await startPlatform(env);
        platform = first.platform;
        url = platform.url;
      }
      const setup = httpCaller(url!, { 'X-API-Key': API_KEY }, 8);
      sessions = await setupSessions(setup.call);
      setup.close();
      if (platform && COLD > 0 && SIDES.includes('switchboard')) {
        await platform.stop();
        platform = undefined;
      }
    }

    // nchan: started and subscribed before switchboard's restart, so nothing stands between its readiness and its load.
    let nchan: Nchan | undefined;
    if (SIDES.includes('nchan')) {
      nchan = await startNchan(`${prefix}:nchan`, NGINX_WORKERS);
      cleanups.push(() => nchan!.stop());
      const { call } = httpCaller(nchan.url, {});
      const ids = sessions.length ? sessions.map((s) => s.id) : Array.from({ length: SESSIONS }, (_, i) => `s${i}`);
      const refused = await openSubscribers(
        'nchan',
        ids.flatMap((s) => CHANNELS.map((c) => ({ url: nchan!.url + nchan!.subscribePath(s, CHANNELS.filter((o) => o !== c)), channel: c }))),
        {},
      );
      if (refused) console.log(`nchan: ${refused} subscriber opens refused at first and retried`);
      sides.nchan = {
        // The body is the envelope switchboard's stream carries, so both sides send and parse the same bytes.
        publish: async (step, i) => {
          const session = ids[i % SESSIONS]!;
          const channel = CHANNELS[Math.floor(i / SESSIONS) % CHANNELS.length]!;
          const body = { event_type: 'MESSAGE', session_id: session, channel, data: { role: i % 2 ? 'assistant' : 'user', content: `bench message ${i}`, metadata: { step, k: i, sent: now() } } };
          return (await call(nchan!.publishPath(session, channel), JSON.stringify(body), true)).status;
        },
        groups: () => ({ nginx: nchan!.pids() }),
      };
    }

    if (SIDES.includes('switchboard')) {
      if (!platform && !TARGET) {
        const second = await startPlatform(env);
        platform = second.platform;
        readyAt = second.ready;
        startedAt = second.started;
      }
      const url = platform?.url ?? TARGET!;
      apiMetricsUrl = `${url}/metrics`;
      subscribersFrom = now();
      const refused = await openSubscribers(
        'switchboard',
        sessions.flatMap((s) => CHANNELS.map((c) => ({ url: `${url}/api/sessions/${s.id}/events?channel=${c}`, channel: c }))),
        { 'X-API-Key': API_KEY },
      );
      if (refused) console.log(`switchboard: ${refused} subscriber opens refused at first (429/503) and retried`);
      subscribersOpen = now() - subscribersFrom;
      const { call } = httpCaller(url, { 'X-API-Key': API_KEY });
      sides.switchboard = {
        publish: async (step, i) => {
          const s = sessions[i % SESSIONS]!;
          const channel = CHANNELS[Math.floor(i / SESSIONS) % CHANNELS.length]!;
          const res = await call(`/api/sessions/${s.id}/messages`, {
            channel,
            role: i % 2 ? 'assistant' : 'user',
            content: `bench message ${i}`,
            interaction_id: s.interactions[channel],
            metadata: { step, k: i, sent: now() },
          });
          return res.status;
        },
        groups: () => platform?.groups() ?? {},
      };
    }

    if (SIDES.includes('insert-publish')) {
      const knex = knexFactory({ client: 'pg', connection: serverUrl(storage!.database), pool: { min: 0, max: 10 } });
      await knex.raw('create table bench_baseline (id uuid primary key default gen_random_uuid(), session_id uuid not null, payload jsonb not null, created_at timestamptz not null default now())');
      const pub = new Redis(redisAddress());
      const sub = new Redis(redisAddress());
      cleanups.push(async () => {
        pub.disconnect();
        sub.disconnect();
        await knex.destroy();
      });
      // One Redis subscriber stands for the 3 subscribers of the other channels: the floor of persisting and publishing, not of fan-out.
      sub.on('pmessage', (_p: string, _c: string, raw: string) => {
        const received = now();
        const body = JSON.parse(raw);
        const current = active['insert-publish'];
        if (!current || current.id !== body.data.metadata.step) return void late++;
        for (const c of CHANNELS) if (c !== body.channel) current.receive(body.data.metadata.k, c, body.channel, body.data.metadata.sent, received);
      });
      await sub.psubscribe(`${prefix}:baseline:*`);
      sides['insert-publish'] = {
        publish: async (step, i) => {
          const s = sessions[i % SESSIONS]!;
          const channel = CHANNELS[Math.floor(i / SESSIONS) % CHANNELS.length]!;
          const body = { event_type: 'MESSAGE', session_id: s.id, channel, data: { content: `bench message ${i}`, metadata: { step, k: i, sent: now() } } };
          await knex('bench_baseline').insert({ session_id: s.id, payload: JSON.stringify(body) });
          await pub.publish(`${prefix}:baseline:${s.id}`, JSON.stringify(body));
          return 200;
        },
        groups: () => ({}),
      };
    }

    console.log(
      `setup: ${SESSIONS} sessions × ${CHANNELS.length} channels; ${SESSIONS * CHANNELS.length} SSE subscribers per side open (lean client: node:http + eventsource-parser); ` +
        `sides ${SIDES.join(', ')}; steps ${RATES.join(', ')} msg/s × ${SECONDS} s; platform: ${TARGET ? `running at ${TARGET}` : START === 'roles' ? 'role entry files under tsx' : `npm ${START === 'dev' ? 'run dev' : 'start'}`}`,
    );
    console.log(
      `fan-out: every message reaches the ${FANOUT} subscribers of its session's other channels on both sides, so both expect ${FANOUT} deliveries per message ` +
        `(switchboard: one bus channel per session, the API skips the sender's channel; nchan: one channel per (session, channel), published once, ` +
        `each subscriber multiplexing its session's ${FANOUT} other channels); nchan: Redis storage, worker_processes ${NGINX_WORKERS} (2 cores; switchboard runs 2 role processes)`,
    );
    if (Number.isFinite(readyAt)) console.log(`switchboard restarted cold: /readyz 200 after ${fmt((readyAt - startedAt) / 1000)} s; load begins once its ${SESSIONS * CHANNELS.length} subscribers are open (they took ${fmt(subscribersOpen / 1000, 2)} s)`);

    if (IDLE > 0 && sides.switchboard && platform) {
      const groups = platform.groups();
      const pids = Object.fromEntries(Object.values(groups).flat().map((p) => [String(p), p]));
      const before = cpuSnapshot(pids);
      const trips = segmentSnapshot([redisPort(), POSTGRES_PORT]);
      await sleep(IDLE * 1000);
      const cpu = groupCpu(before, cpuSnapshot(pids), groups, storage?.database);
      const idleTrips = roundTripsBetween(trips, segmentSnapshot([redisPort(), POSTGRES_PORT]), groups);
      const share = Object.entries(cpu).map(([k, v]) => `${k} ${fmt((v * 100) / IDLE, 2)} %`).join(', ');
      const tripText = Object.entries(idleTrips).map(([k, v]) => `${k} Redis ${fmt((v[redisPort()] ?? 0) / IDLE, 1)}/s, Postgres ${fmt((v[POSTGRES_PORT] ?? 0) / IDLE, 1)}/s`).join('; ');
      console.log(`switchboard idle (${IDLE} s, ${SESSIONS * CHANNELS.length} streams open, no messages): CPU of a core ${share}; round trips ${tripText}   [load ${loadavg()}]`);
    }

    let stepId = 0;
    const failures: Partial<Record<Side, number>> = {};
    const results: StepResult[] = [];
    for (const rate of RATES) {
      for (const side of SIDES) {
        const driver = sides[side];
        if (!driver || (failures[side] ?? 0) >= MAX_FAILURES) continue;
        const step = new Step(++stepId);
        active[side] = step;
        const total = Math.round(rate * SECONDS);
        const groups = driver.groups();
        const pids = Object.fromEntries(Object.values(groups).flat().map((p) => [String(p), p]));
        const workerMetricsUrl = side === 'switchboard' ? platform?.workerMetricsUrl : undefined;
        const jobsBefore = await laneJobsDone(workerMetricsUrl);
        const commitsBefore = side === 'switchboard' ? await commitsSoFar(storage?.database) : undefined;
        const tripsBefore = side === 'switchboard' ? segmentSnapshot([redisPort(), POSTGRES_PORT]) : undefined;
        const before = cpuSnapshot(pids);
        const benchBefore = process.cpuUsage();
        const t0 = now();
        loadStart[side] ??= t0;
        const timeline = side === 'switchboard' && COLD > 0 && TIMELINE > 0 && loadStart[side] === t0 && platform ? startTimeline(driver.groups, storage?.database, apiMetricsUrl, storage?.prefix) : undefined;
        const timelineStop = timeline && sleep(TIMELINE * 1000 + 1500).then(() => timeline.stop());
        const load = await openLoop(total, rate, async (i) => {
          const postStart = now();
          const status = await driver.publish(step.id, i);
          step.postLatencies.push(now() - postStart);
          if (status < 200 || status >= 300) {
            step.rejected++;
            step.refusals.set(status, (step.refusals.get(status) ?? 0) + 1);
          }
        });
        const expected = total * FANOUT;
        // Deliveries still under way: wait while they keep coming (at most 30 s).
        for (let last = -1, still = 0, waited = 0; step.seen.size < expected && waited < 30_000 && still < 3_000; waited += 100) {
          await sleep(100);
          still = step.seen.size === last ? still + 100 : 0;
          last = step.seen.size;
        }
        const after = cpuSnapshot(pids);
        const tripsAfter = tripsBefore && segmentSnapshot([redisPort(), POSTGRES_PORT]);
        const elapsed = (now() - t0) / 1000;
        const bench = process.cpuUsage(benchBefore);
        const jobsAfter = await laneJobsDone(workerMetricsUrl);
        active[side] = undefined;
        const cpu = groupCpu(before, after, groups, storage?.database);
        cpu['load generator'] = (bench.user + bench.system) / 1e6;
        const cpuPerMessage = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, (v * 1000) / total]));
        const all = summarize(step.deliveries.map((d) => d.latency));
        const lost = expected - step.seen.size;
        const held = all.p99 < HELD_P99_MS && lost === 0;
        if (!held) failures[side] = (failures[side] ?? 0) + 1;
        const result: StepResult = { side, rate, all, delivered: step.seen.size, expected, lost, rejected: step.rejected, held, cpuPerMessage, lateMs: load.lateMs };
        // The first step of a side after its start: its first seconds apart from the rest.
        if (COLD > 0 && loadStart[side] === t0) {
          const cut = t0 + COLD * 1000;
          result.cold = { first: summarize(step.deliveries.filter((d) => d.sent < cut).map((d) => d.latency)), rest: summarize(step.deliveries.filter((d) => d.sent >= cut).map((d) => d.latency)) };
        }
        results.push(result);
        const groupText = Object.entries(cpuPerMessage).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ');
        const mainGroups = Object.entries(cpuPerMessage).filter(([k]) => k !== 'load generator' && k !== 'other').reduce((s, [, v]) => s + v, 0);
        console.log(
          `${side.padEnd(14)} ${String(rate).padStart(5)} msg/s × ${SECONDS} s  ${line(all)}  delivered ${step.seen.size}/${expected}  lost ${lost}  POST non-2xx ${step.rejected}  ` +
            `${step.refusals.size ? `(${[...step.refusals].map(([k, v]) => `${v}× ${k || 'no answer'}`).join(', ')}) ` : ''}${held ? 'held' : 'FAILED'}   [load ${loadavg()}]`,
        );
        step.postLatencies.sort((a, b) => a - b);
        console.log(
          `${''.padEnd(14)} CPU ms/message: ${groupText} (server side total ${fmt(mainGroups, 2)}); POST round trip p50 ${fmt(percentile(step.postLatencies, 50))} p99 ${fmt(percentile(step.postLatencies, 99))} ms; ` +
            `duplicates ${step.duplicates}, own-channel ${step.ownChannel}, max schedule lag ${fmt(load.lateMs)} ms, streams dropped ${dropped}, late deliveries ${late}`,
        );
        const waits = Object.entries(runQueueWaits(before, after, groups)).map(([k, v]) => `${k} ${fmt((v * 1000) / elapsed, 0)}`).join(', ');
        const jobs = jobsBefore !== undefined && jobsAfter !== undefined ? jobsAfter - jobsBefore : undefined;
        const perJob = jobs ? `; lane jobs ${jobs}, ${fmt(total / jobs, 1)} messages per job` : '';
        console.log(`${''.padEnd(14)} waiting for a CPU (main threads' run-queue delay), ms per second: ${waits}${perJob}`);
        if (tripsBefore && tripsAfter) {
          // Counters of pg_stat_database reach it within a second of the commit.
          await sleep(1_100);
          const commitsAfter = await commitsSoFar(storage?.database);
          const trips = roundTripsBetween(tripsBefore, tripsAfter, groups);
          const per = (n: number | undefined) => fmt((n ?? 0) / total, 2);
          const roles = Object.entries(trips).map(([k, v]) => `${k} Redis ${per(v[redisPort()])}, Postgres ${per(v[POSTGRES_PORT])}`).join('; ');
          const commits = commitsBefore !== undefined && commitsAfter !== undefined ? `; Postgres commits ${per(commitsAfter - commitsBefore)} (whole database)` : '';
          console.log(`${''.padEnd(14)} per message: round trips (TCP writes) ${roles}${commits}${jobs ? `; messages per lane job ${fmt(total / jobs, 1)}` : ''}`);
        }
        if (result.cold) {
          const ratio = result.cold.first.p99 / result.cold.rest.p99;
          if (timelineStop) for (const l of timelineLines(t0, TIMELINE, step.deliveries, await timelineStop)) console.log(`${''.padEnd(14)} ${l}`);
          console.log(
            `${''.padEnd(14)} first ${COLD} s of load  ${line(result.cold.first)}  (${result.cold.first.count} deliveries)\n` +
              `${''.padEnd(14)} after that         ${line(result.cold.rest)}  (${result.cold.rest.count} deliveries)   p99 ratio first/after ${fmt(ratio, 2)}` +
              (side === 'switchboard' && Number.isFinite(readyAt) ? ` (target ≤ 2: ${ratio <= 2 ? 'met' : 'MISSED'}; load began ${fmt((t0 - readyAt) / 1000)} s after /readyz 200)` : ''),
          );
        }
        await sleep(2_000);
      }
    }

    // Side by side.
    console.log('');
    console.log(`sessions bench: ${SESSIONS * CHANNELS.length} SSE subscribers over ${SESSIONS} sessions, open loop, ${SECONDS} s steps; latency publish→delivery in ms [load ${loadavg()}]`);
    const shown = SIDES.filter((s) => sides[s]);
    console.log(`  ${'msg/s'.padStart(6)}  ${shown.map((s) => `${s.padEnd(14)} ${'p50'.padStart(6)} ${'p95'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(7)} ${'lost'.padStart(6)} ${'CPU ms/msg'.padStart(10)}`).join('   ')}`);
    for (const rate of RATES) {
      const cells = shown.map((side) => {
        const r = results.find((x) => x.side === side && x.rate === rate);
        if (!r) return `${'(stopped)'.padEnd(14)} ${''.padStart(6)} ${''.padStart(6)} ${''.padStart(6)} ${''.padStart(7)} ${''.padStart(6)} ${''.padStart(10)}`;
        const server = Object.entries(r.cpuPerMessage).filter(([k]) => k !== 'load generator' && k !== 'other').reduce((s, [, v]) => s + v, 0);
        return `${(r.held ? 'held' : 'FAILED').padEnd(14)} ${fmt(r.all.p50).padStart(6)} ${fmt(r.all.p95).padStart(6)} ${fmt(r.all.p99).padStart(6)} ${fmt(r.all.max).padStart(7)} ${String(r.lost).padStart(6)} ${fmt(server, 2).padStart(10)}`;
      });
      console.log(`  ${String(rate).padStart(6)}  ${cells.join('   ')}`);
    }
    const ceiling = (side: Side) => Math.max(0, ...results.filter((r) => r.side === side && r.held).map((r) => r.rate));
    if (RATES.length > 1) {
      const ceilings = shown.map((s) => `${s} ${ceiling(s) || 'none'} msg/s`).join(', ');
      const ratio = sides.switchboard && sides.nchan ? ceiling('switchboard') / ceiling('nchan') : NaN;
      console.log(`highest rate held (p99 < ${HELD_P99_MS} ms, nothing lost): ${ceilings}${Number.isFinite(ratio) ? `; ratio switchboard/nchan ${fmt(ratio, 2)} (target ≥ 0.5)` : ''}`);
    }
    if (sides.switchboard && sides.nchan) {
      for (const rate of RATES.filter((r) => r === 500 || r === 1000)) {
        const ours = results.find((r) => r.side === 'switchboard' && r.rate === rate);
        const theirs = results.find((r) => r.side === 'nchan' && r.rate === rate);
        if (!ours || !theirs) continue;
        const p50 = rate === 500 ? `; p50 ≤ 3 ms ${ours.all.p50 <= 3 ? 'met' : 'MISSED'} (${fmt(ours.all.p50)})` : '';
        console.log(`target at ${rate} msg/s: switchboard p99 ≤ nchan's ${ours.all.p99 <= theirs.all.p99 ? 'met' : 'MISSED'} (${fmt(ours.all.p99)} vs ${fmt(theirs.all.p99)} ms)${p50}`);
      }
    }
    if (platform?.apiPid) {
      const mem = rssMb(platform.apiPid);
      const metrics = await (await fetch(apiMetricsUrl!)).text().catch(() => '');
      const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) * 1000;
      console.log(`switchboard API: RSS ${fmt(mem.rss)} MB (peak ${fmt(mem.peak)} MB); event-loop delay p99 ${fmt(gauge('nodejs_eventloop_lag_p99_seconds'))} ms, max ${fmt(gauge('nodejs_eventloop_lag_max_seconds'))} ms`);
    }
  } finally {
    for (const s of subscriptions) s.close();
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(err));
    await platform?.stop();
    await storage?.drop();
    redisServer?.kill('SIGTERM');
  }
}

await main();
process.exit(0);
