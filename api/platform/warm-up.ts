/**
 * The web role's warm-up: what the first requests after a start would otherwise pay for, done
 * before /readyz answers 200, so a load balancer sends traffic to a process that is as fast as it
 * will be (issue 18 point 4: the first 10 s after ready within 2× the steady state's p99).
 *
 * - PostgreSQL: the pool opens DATABASE_POOL_MIN connections (kept open), each used once.
 * - Redis: the queue connection is up with every session lane's Queue, and the bus's publisher and
 *   subscriber connections are made (the first SSE stream would otherwise wait for its SUBSCRIBE's
 *   connection, and every concurrent first stream queued behind it).
 * - Metrics: one collection, as the first Prometheus scrape would make it.
 * - The whole path, end to end: internal users (display name warmUpUserName, numbers of the
 *   fictional +1 555 010 prefix, padded to 15 digits so they cannot be real) get a session each
 *   with SSE streams open over loopback, and rounds of one message per session go through POST
 *   …/messages, the lane queue, a worker (group commit to PostgreSQL), the bus and the streams,
 *   each POST waiting for the worker's publication, until round times settle: the statements are
 *   prepared on the connections, the bus has carried events. Then a sustained phase: thousands of
 *   messages with many POSTs in flight, each streamed to three channels as in production, so V8 has
 *   optimised what a message runs in both roles and the young generation has grown to its working
 *   size (rounds alone left the first seconds of real load 2.3-3.9× slower at p99 than the rest:
 *   the API's CPU per message still fell for 5 s). The users are then deleted with everything of
 *   theirs (cascade; no erasure audit row, as nobody was erased). Since the rounds wait for a
 *   worker, readiness waits for one (at most API_WARMUP_TIMEOUT_MS; then warm_up says partial).
 *
 * A warm-up step that fails (a dependency down) does not hold readiness back for ever: /readyz
 * reports the dependency itself.
 */
import http from 'node:http';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db/index.js';
import { publishMessage, subscribeChannel } from '../../shared/bus.js';
import { queue, sessionLanes } from '../../shared/queues.js';
import { logger } from '../../shared/logger.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { createUser, deleteUserData } from '../../shared/sessions/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { insertInteraction } from '../../shared/sessions/interactions.store.js';

let state: 'none' | 'warming' | 'warm' | 'partial' = 'none';

/**
 * 'pending' while a warm-up of this process runs (readiness waits for it); 'done' after it or when
 * there is none; 'partial' when no worker published the warm-up's messages within
 * API_WARMUP_TIMEOUT_MS (the API's side is warm, the first messages pay the worker's start).
 */
export function warmUpState(): 'pending' | 'done' | 'partial' {
  return state === 'warming' ? 'pending' : state === 'partial' ? 'partial' : 'done';
}

/** The display name of the warm-up's internal users; their numbers start with the fictional +1 555 010 prefix and run to E.164's 15 digits. */
export const warmUpUserName = 'switchboard warm-up (internal)';
const warmUpPhone = () => `+1555010${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
/** Sessions warmed side by side: messages of several sessions in one group commit, as under load. */
const warmUpSessions = 16;
/**
 * The channels of each warm-up session: each streams, and the sustained phase posts on each in turn,
 * so a message fans out to three streams as in production.
 */
const warmUpChannels = ['chat', 'sms', 'voice', 'slack'] as const;
/** Messages of the sustained phase, and the POSTs it keeps in flight. */
const sustainedMessages = 4_000;
const sustainedConcurrency = 32;
/** Rounds and sustained-phase messages the last warm-up ran (its log line). */
let roundsRun = 0;
let sustainedSent = 0;

function request(base: string, method: string, path: string, key: string, body?: unknown): Promise<number> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(base + path, {
      method,
      agent,
      headers: { 'X-API-Key': key, 'X-Request-Id': 'warm-up', ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(res.statusCode === 200 && /"message_published":true/.test(text) ? 1 : 0));
    });
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}
const agent = new http.Agent({ keepAlive: true, maxSockets: sustainedConcurrency });

/** An SSE stream of the warm-up over loopback; counts the frames it receives. */
function openStream(base: string, path: string, key: string): { opened: Promise<boolean>; received: () => number; close(): void } {
  let frames = 0;
  const req = http.get(base + path, { agent: false, headers: { Accept: 'text/event-stream', 'X-API-Key': key, 'X-Request-Id': 'warm-up' } });
  const opened = new Promise<boolean>((resolve) => {
    req.on('response', (res) => {
      if (res.statusCode !== 200) return void (res.resume(), resolve(false));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (frames += chunk.split('\ndata: ').length - 1));
      res.on('error', () => undefined);
      resolve(true);
    });
    req.on('error', () => resolve(false));
  });
  return { opened, received: () => frames, close: () => req.destroy() };
}

/** Rounds a warm-up runs at least, and over which it judges whether round times still fall. */
const settleWindow = 15;
/**
 * Round times have settled: the median of the last window is within 1.25× of the fastest window's
 * before it (V8 has compiled what a round runs; the pools hold what it needs).
 */
function settled(times: number[]): boolean {
  if (times.length < 3 * settleWindow) return false;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const last = median(times.slice(-settleWindow));
  let best = Infinity;
  for (let i = 0; i + settleWindow <= times.length - settleWindow; i += settleWindow) best = Math.min(best, median(times.slice(i, i + settleWindow)));
  return last <= 1.25 * best;
}

/**
 * Internal users of warm-ups that did not clean up after themselves (the process died meanwhile);
 * those of a warm-up still running elsewhere are younger than this.
 */
async function removeLeftovers(): Promise<void> {
  const left = await db()('users').where({ display_name: warmUpUserName }).andWhere('created_at', '<', db().raw("now() - interval '10 minutes'")).pluck('user_id');
  for (const id of left) await db().transaction((trx) => deleteUserData(trx, id));
}

/**
 * The real path end to end: internal users with a session each, streams on its four channels, and
 * rounds of one message per session (channels taking turns), each POST waiting for the worker to
 * persist and publish it (SESSION_PUBLISH_WAIT_MS), until round times settle (at most
 * API_WARMUP_ROUNDS rounds), then the sustained phase; all within API_WARMUP_TIMEOUT_MS. Everything
 * goes with the users at the end (their rows cascade; no erasure audit row: nobody was erased).
 * Returns whether a worker published them.
 */
async function warmRealPath(base: string, key: string, rounds: number, deadline: number): Promise<boolean> {
  const users = await Promise.all(Array.from({ length: warmUpSessions }, () => createUser({ phone_number: warmUpPhone(), display_name: warmUpUserName })));
  const streams: Array<ReturnType<typeof openStream>> = [];
  try {
    const sessions = await Promise.all(
      users.map(async (u) => {
        const { session } = await resolveSession(u.user_id);
        // No wait for CHANNEL_JOINED here: the rounds below wait for the worker.
        const interactions = await Promise.all(warmUpChannels.map((channel) => insertInteraction(db(), session.session_id, { channel })));
        return { id: session.session_id, interactions: interactions.map((i) => i.interaction_id) };
      }),
    );
    for (const s of sessions) for (const c of warmUpChannels) streams.push(openStream(base, `/api/sessions/${s.id}/events?channel=${c}`, key));
    await Promise.all(streams.map((s) => s.opened));
    // Messages shaped as clients send them (both roles, every channel, metadata with fields of several
    // types): code V8 optimised for one shape only is deoptimised by the first real message, and the
    // first second of load paid for it (groups took 3-5× their steady time with empty metadata).
    const post = (s: (typeof sessions)[number], n: number) => {
      const c = n % warmUpChannels.length;
      const metadata = n % 3 === 0 ? {} : { source: 'warm-up', n, at: Date.now(), ...(n % 3 === 2 ? { tags: ['internal'], nested: { ok: true } } : {}) };
      const body = { channel: warmUpChannels[c], role: n % 2 ? 'assistant' : 'user', content: `warm-up message ${n}`, interaction_id: s.interactions[c], metadata };
      return request(base, 'POST', `/api/sessions/${s.id}/messages`, key, body);
    };
    let published = 0;
    const times: number[] = [];
    for (let round = 0; round < rounds && Date.now() < deadline && !settled(times); round++) {
      const t0 = performance.now();
      const outcomes = await Promise.all(sessions.map((s, i) => post(s, round * sessions.length + i)));
      times.push(performance.now() - t0);
      roundsRun = times.length;
      published += outcomes.reduce((a, b) => a + b, 0);
    }
    // Sustained load only once a worker answers (otherwise every POST would wait out its timeout).
    if (published > 0) {
      let sent = 0;
      const sender = async () => {
        while (sent < sustainedMessages && Date.now() < deadline) {
          const n = sent++;
          // Consecutive messages go to different sessions, and each session's channel turns with them.
          published += await post(sessions[n % sessions.length]!, Math.floor(n / sessions.length));
        }
      };
      await Promise.all(Array.from({ length: sustainedConcurrency }, sender));
      sustainedSent = sent;
    }
    return published > 0 && streams.some((s) => s.received() > 0);
  } finally {
    for (const s of streams) s.close();
    await Promise.all(users.map((u) => db().transaction((trx) => deleteUserData(trx, u.user_id))));
  }
}

/** Warms this process up against its own server at `base`; /readyz answers 503 until it is done. */
export async function warmUp(base: string): Promise<void> {
  const cfg = config();
  state = 'warming';
  const started = Date.now();
  let partial = false;
  const log = logger('web');
  const step = async (name: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      log.warn({ step: name, err: (err as Error).message }, 'warm-up step failed; readiness reports the dependency');
    }
  };
  try {
    await Promise.all([
      // Concurrent acquisitions: each opens a connection of its own, which the pool then keeps (min).
      step('postgres', () => Promise.all(Array.from({ length: cfg.db.poolMin }, () => db().raw('select 1')))),
      step('queues', () => Promise.all(sessionLanes.map((name) => queue(name).waitUntilReady()))),
      // The first scrape makes a Queue of every queue for the queue gauges and compiles the exposition:
      // taken by the first Prometheus scrape after ready, it held the event loop for tens of ms.
      step('metrics', () => metricsRegistry.metrics()),
      step('bus', async () => {
        const channel = `warm-up:${process.pid}`;
        const leave = await subscribeChannel(channel, () => undefined);
        await publishMessage(channel, {});
        leave();
      }),
    ]);
    const key = cfg.auth.apiKeys[0];
    if (key && cfg.sessions.enabled) {
      let worker = false;
      await step('real path', async () => {
        await removeLeftovers();
        worker = await warmRealPath(base, key, cfg.http.warmUpRounds, started + cfg.http.warmUpTimeoutMs);
      });
      if (!worker) {
        partial = true;
        log.warn({ timeout_ms: cfg.http.warmUpTimeoutMs }, 'warm-up: no worker published its messages in time; only the API side is warm');
      }
    }
  } finally {
    state = partial ? 'partial' : 'warm';
    log.info({ ms: Date.now() - started, rounds: roundsRun, sustained_messages: sustainedSent }, 'warm-up done');
  }
}
