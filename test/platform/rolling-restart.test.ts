/**
 * A rolling restart loses nothing (issue 40, point 1): two web and two worker processes are replaced
 * one at a time (the new one started and ready, then the old one stopped with SIGTERM, as a
 * Kubernetes rollout with maxSurge 1 does) under ROLLING_RATE (200) session messages a second, with an
 * SSE reader on every session. The test plays the load balancer: it sends only to web processes whose
 * /readyz answered 200 at its last probe (every 200 ms). It prints what it saw and asserts that no
 * accepted message was lost or doubled (on the live streams and in a full replay from PostgreSQL), that no request or stream
 * failed, that readers only reconnected (with Last-Event-ID), and that every process exited 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { httpCaller, inPool, sleep, stopProcesses } from '../bench/bench-platform.js';
import { eventually } from '../helpers/eventually.js';
import { testApiKey } from '../helpers/platform.js';
import { platformAt, readSse, startWeb, startWorker, type SseRead } from '../helpers/role-processes.js';
import { newInteraction, newSession } from '../sessions/helpers.js';

const RATE = Number(process.env.ROLLING_RATE ?? 200);
const SESSIONS = 40;
const PROBE_MS = 200;
// Short enough for a quick test, long enough for the balancer's probe to see readiness fail first.
const env = { SHUTDOWN_DRAIN_DELAY_MS: '1000', SHUTDOWN_TIMEOUT_MS: '20000', LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE: '0' };

type Web = Awaited<ReturnType<typeof startWeb>> & { ready: boolean; caller: ReturnType<typeof httpCaller> };
const children: ChildProcess[] = [];
const webs: Web[] = [];
const workers: Array<Awaited<ReturnType<typeof startWorker>>> = [];

async function newWeb(): Promise<Web> {
  const started = await startWeb(env);
  children.push(started.child);
  return { ...started, ready: false, caller: httpCaller(started.url, { 'X-API-Key': testApiKey }, 256) };
}
async function newWorker() {
  const started = await startWorker(env);
  children.push(started.child);
  return started;
}

beforeAll(async () => {
  webs.push(...(await Promise.all([newWeb(), newWeb()])));
  workers.push(...(await Promise.all([newWorker(), newWorker()])));
}, 180_000);
afterAll(async () => {
  for (const w of webs) w.caller.close();
  await stopProcesses(children);
});

describe('rolling restart', () => {
  it(`replaces two web and two worker processes one at a time under ${RATE} messages/s with SSE readers: nothing lost, nothing doubled, no client error`, async () => {
    // The balancer: readiness of each web process, probed like a Kubernetes readinessProbe (timeoutSeconds 1,
    // failureThreshold 1 for an answer of 503 or a refused connection, 3 for a probe that timed out: on a
    // loaded machine a slow answer is not a stopping process).
    let probing = true;
    const slow = new Map<Web, number>();
    const probes = (async () => {
      while (probing) {
        await Promise.all(
          webs.map(async (w) => {
            const status = await fetch(`${w.url}/readyz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, (err: Error) => (err.name === 'TimeoutError' ? -1 : 0));
            slow.set(w, status === -1 ? (slow.get(w) ?? 0) + 1 : 0);
            w.ready = status === 200 || (status === -1 && slow.get(w)! < 3 && w.ready);
          }),
        );
        await sleep(PROBE_MS);
      }
    })();
    let turn = 0;
    const pick = (): Web | undefined => {
      const ready = webs.filter((w) => w.ready);
      return ready[turn++ % Math.max(ready.length, 1)];
    };
    await eventually(() => webs.every((w) => w.ready), 30_000, 'both web processes ready');

    const api = platformAt(webs[0]!.url);
    // A few at a time: the setup is not what this test loads the platform with.
    const sessions: Array<{ sessionId: string; chat: string }> = [];
    await inPool(Array.from({ length: SESSIONS }), 4, async () => {
      const { sessionId } = await newSession(api);
      const chat = await newInteraction(api, sessionId, 'chat');
      await newInteraction(api, sessionId, 'voice');
      sessions.push({ sessionId, chat });
    });

    // Readers: one stream per session on the voice channel (messages go to chat), resumed with Last-Event-ID wherever the balancer says.
    const delivered = new Map<string, number>();
    let reconnects = 0;
    const readerErrors: string[] = [];
    let reading = true;
    const open: SseRead[] = [];
    const readers = sessions.map(async ({ sessionId }) => {
      let lastId: string | undefined;
      while (reading) {
        const web = pick();
        if (!web) {
          readerErrors.push('no ready web process');
          await sleep(PROBE_MS);
          continue;
        }
        const stream = readSse(
          `${web.url}/api/sessions/${sessionId}/events?channel=voice`,
          (e) => {
            lastId = e.id ?? lastId;
            const envelope = JSON.parse(e.data);
            if (envelope.event_type === 'MESSAGE') delivered.set(envelope.data.content, (delivered.get(envelope.data.content) ?? 0) + 1);
          },
          lastId,
        );
        open.push(stream);
        const status = await stream.opened;
        if (status !== 200) {
          readerErrors.push(`stream open: HTTP ${status}`);
          await sleep(500);
          continue;
        }
        const why = await stream.ended;
        if (!reading) break;
        if (why !== 'ended') readerErrors.push(`stream: ${why}`);
        reconnects++;
        await sleep(stream.retry() ?? 1000);
      }
    });
    await eventually(() => open.length >= SESSIONS && true, 30_000, 'every reader open');

    // The load: open loop at RATE messages a second, round-robin over the sessions and the ready web processes.
    const accepted = new Set<string>();
    const failures = new Map<string, number>();
    /** When each failure happened, to tell the stops' doing from a machine too loaded for the rate. */
    const failedAt: number[] = [];
    const fail = (why: string) => {
      failures.set(why, (failures.get(why) ?? 0) + 1);
      failedAt.push(Date.now());
    };
    const inFlight = new Set<Promise<void>>();
    let sent = 0;
    let sending = true;
    const load = (async () => {
      const start = Date.now();
      while (sending) {
        const due = Math.floor(((Date.now() - start) * RATE) / 1000);
        for (; sent < due; sent++) {
          const s = sessions[sent % SESSIONS]!;
          const content = `m${sent}`;
          const web = pick();
          if (!web) {
            fail('no ready web process');
            continue;
          }
          const p = web.caller.call(`/api/sessions/${s.sessionId}/messages`, { channel: 'chat', role: 'user', content, interaction_id: s.chat }).then((res) => {
            if (res.status === 200 || res.status === 202) return void accepted.add(content);
            fail(`HTTP ${res.status}${res.body?.detail ? ` (${String(res.body.detail).slice(0, 80)})` : ''}`);
          });
          inFlight.add(p);
          void p.finally(() => inFlight.delete(p));
        }
        await sleep(5);
      }
    })();

    // The rollout: a new process started and ready, then the old one stopped; one at a time.
    const exits: string[] = [];
    /** From each SIGTERM to 1 s after the process exited. */
    const stopWindows: Array<[number, number]> = [];
    const replace = async (kind: 'web' | 'worker', i: number) => {
      await sleep(3000);
      const old = kind === 'web' ? webs[i]! : workers[i]!;
      if (kind === 'web') {
        const fresh = await newWeb();
        webs.push(fresh);
        await eventually(() => fresh.ready, 30_000, 'the new web process ready');
      } else workers.push(await newWorker());
      const stoppedAt = Date.now();
      const exited = once(old.child, 'exit');
      old.child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      stopWindows.push([stoppedAt, Date.now() + 1000]);
      exits.push(`${kind} ${i}: exit ${code} after ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);
      if (kind === 'web') webs.splice(webs.indexOf(old as Web), 1);
      else workers.splice(workers.indexOf(old as (typeof workers)[number]), 1);
    };
    for (const [kind, i] of [['web', 0], ['web', 0], ['worker', 0], ['worker', 0]] as const) await replace(kind, i);
    await sleep(3000);
    sending = false;
    await load;
    await Promise.all(inFlight);

    // Everything accepted reaches its stream (or the test fails naming what did not).
    await eventually(() => [...accepted].every((c) => delivered.has(c)), 60_000, 'every accepted message delivered').catch(() => undefined);
    reading = false;
    probing = false;
    for (const s of open) s.close();
    await Promise.all(readers);
    await probes;

    const lost = [...accepted].filter((c) => !delivered.has(c));
    const duplicates = [...delivered].filter(([, n]) => n > 1).map(([c]) => c);
    // Stored once: a full replay of each stream from PostgreSQL (Last-Event-ID 0) holds every accepted message once.
    const replayed = new Map<string, number>();
    const replays = sessions.map(({ sessionId }) =>
      readSse(`${webs[0]!.url}/api/sessions/${sessionId}/events?channel=voice`, (e) => {
        const envelope = JSON.parse(e.data);
        if (envelope.event_type === 'MESSAGE') replayed.set(envelope.data.content, (replayed.get(envelope.data.content) ?? 0) + 1);
      }, '0'),
    );
    await eventually(() => [...accepted].every((c) => replayed.has(c)), 60_000, 'every accepted message replayed').catch(() => undefined);
    for (const r of replays) r.close();
    const storedTwice = [...replayed].filter(([, n]) => n > 1).map(([c]) => c);
    const notStored = [...accepted].filter((c) => !replayed.has(c));
    const clientErrors = [...failures].map(([k, n]) => `${k}: ${n}`);
    const duringStops = failedAt.filter((t) => stopWindows.some(([from, to]) => t >= from && t <= to)).length;
    console.log(
      `rolling restart at ${RATE} msg/s: sent ${sent}, accepted ${accepted.size}, delivered ${delivered.size}, lost ${lost.length}, duplicates ${duplicates.length} ` +
        `(replayed from PostgreSQL: twice ${storedTwice.length}, missing ${notStored.length}), client errors ${clientErrors.length ? `${clientErrors.join(', ')} (${duringStops} of ${failedAt.length} while a process was stopping)` : 0}, ` +
        `stream errors ${readerErrors.length ? [...new Set(readerErrors)].map((e) => `${e}: ${readerErrors.filter((x) => x === e).length}`).join(', ') : 0}, stream reconnects ${reconnects}; ${exits.join('; ')}`,
    );
    expect(lost.slice(0, 10)).toEqual([]);
    expect(duplicates.slice(0, 10)).toEqual([]);
    expect(storedTwice.slice(0, 10)).toEqual([]);
    expect(notStored.slice(0, 10)).toEqual([]);
    expect(clientErrors).toEqual([]);
    expect(readerErrors.slice(0, 10)).toEqual([]);
    expect(accepted.size).toBe(sent);
    expect(exits.every((e) => / exit 0 /.test(e))).toBe(true);
    // Each web process stopped ended the streams it held; their readers resumed elsewhere.
    expect(reconnects).toBeGreaterThanOrEqual(SESSIONS);
  }, 300_000);
});
