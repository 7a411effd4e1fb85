/**
 * The web role's warm-up: what the first requests after a start would otherwise pay for, done
 * before /readyz answers 200, so a load balancer sends traffic to a process that is as fast as it
 * will be (issue 18 point 4: the first 10 s after ready within 2× the steady state's p99).
 *
 * - PostgreSQL: the pool opens DATABASE_POOL_MIN connections (kept open), each used once.
 * - Redis: the queue connection is up with every session lane's Queue, and the bus's publisher and
 *   subscriber connections are made (the first SSE stream would otherwise wait for its SUBSCRIBE's
 *   connection, and every concurrent first stream queued behind it).
 * - Code: rounds of real requests through the whole stack over loopback (auth, routing, validation,
 *   the publish and stream routes' database reads, the problem middleware), about an
 *   unknown session so they change nothing, until V8 has compiled what a request runs.
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

/** An id no session has (v4 UUIDs never have version nibble 0): the warm-up's requests find nothing and change nothing. */
const nobody = '00000000-0000-0000-0000-000000000000';

let state: 'none' | 'warming' | 'warm' = 'none';

/** 'pending' while a warm-up of this process runs (readiness waits for it); 'done' after it or when there is none. */
export function warmUpState(): 'pending' | 'done' {
  return state === 'warming' ? 'pending' : 'done';
}

function request(base: string, method: string, path: string, key: string, body?: unknown): Promise<void> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(base + path, {
      method,
      agent: false,
      headers: { 'X-API-Key': key, 'X-Request-Id': 'warm-up', ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => resolve());
    req.end(payload);
  });
}

/** Warms this process up against its own server at `base`; /readyz answers 503 until it is done. */
export async function warmUp(base: string): Promise<void> {
  const cfg = config();
  state = 'warming';
  const started = Date.now();
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
      step('bus', async () => {
        const channel = `warm-up:${process.pid}`;
        const leave = await subscribeChannel(channel, () => undefined);
        await publishMessage(channel, {});
        leave();
      }),
    ]);
    const key = cfg.auth.apiKeys[0];
    if (key && cfg.sessions.enabled) {
      const message = { channel: 'chat', role: 'user', content: 'warm-up', interaction_id: nobody, metadata: {} };
      for (let i = 0; i < cfg.http.warmUpRounds; i++) {
        await Promise.all([
          request(base, 'POST', `/api/sessions/${nobody}/messages`, key, message),
          request(base, 'GET', `/api/sessions/${nobody}/events?channel=chat`, key),
          request(base, 'GET', `/api/sessions/${nobody}/context`, key),
        ]);
      }
    }
  } finally {
    state = 'warm';
    log.info({ ms: Date.now() - started }, 'warm-up done');
  }
}
