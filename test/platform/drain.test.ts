/**
 * Drain on stop, as a load balancer and an orchestrator see it (shared/lifecycle.ts, shared/probes.ts):
 * on SIGTERM a web process fails /readyz at once yet keeps serving (a message is still accepted and
 * delivered) for SHUTDOWN_DRAIN_DELAY_MS, then tells its SSE clients when to reconnect, ends their
 * streams and exits 0; a worker answers /healthz and /readyz on its own port and exits 0 on SIGTERM.
 * On the old shutdown the web process closed its listener at once: /readyz was refused, not 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { EventSourceMessage } from 'eventsource-parser';
import { stopProcesses } from '../bench/bench-platform.js';
import { eventually } from '../helpers/eventually.js';
import { platformAt, readSse, startWeb, startWorker } from '../helpers/role-processes.js';
import { newInteraction, newSession, publish } from '../sessions/helpers.js';

const DRAIN_MS = 1500;
const children: ChildProcess[] = [];
let web: Awaited<ReturnType<typeof startWeb>>;
let worker: Awaited<ReturnType<typeof startWorker>>;

beforeAll(async () => {
  // Each process is stopped after the file whatever happens to the other's start.
  const kept = <T extends { child: ChildProcess }>(role: T) => (children.push(role.child), role);
  [web, worker] = await Promise.all([startWeb({ SHUTDOWN_DRAIN_DELAY_MS: String(DRAIN_MS) }).then(kept), startWorker().then(kept)]);
}, 120_000);
afterAll(() => stopProcesses(children));

const status = (url: string) => fetch(url).then((r) => r.status, () => 0);

describe('drain on SIGTERM', () => {
  it('web: readiness fails at once, it keeps serving for the drain delay, then hints SSE clients to reconnect, ends them and exits 0', async () => {
    const api = platformAt(web.url);
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await newInteraction(api, sessionId, 'voice');
    const seen: string[] = [];
    const stream = readSse(`${web.url}/api/sessions/${sessionId}/events?channel=voice`, (e: EventSourceMessage) => {
      const envelope = JSON.parse(e.data);
      if (envelope.event_type === 'MESSAGE') seen.push(envelope.data.content);
    });
    expect(await stream.opened).toBe(200);
    expect((await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'before', interaction_id: chat })).status).toBeLessThan(300);
    await eventually(() => seen.includes('before'));
    expect(await status(`${web.url}/readyz`)).toBe(200);

    const stoppedAt = Date.now();
    const exited = once(web.child, 'exit');
    web.child.kill('SIGTERM');
    // The balancer's next probe sees 503; meanwhile the process still serves what reaches it.
    await eventually(async () => (await status(`${web.url}/readyz`)) === 503, 500, '/readyz 503 right after SIGTERM');
    expect(await status(`${web.url}/healthz`)).toBe(200);
    const during = await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'during the drain', interaction_id: chat });
    expect(during.status).toBeLessThan(300);
    await eventually(() => seen.includes('during the drain'));

    expect(await stream.ended).toBe('ended');
    const endedAfter = Date.now() - stoppedAt;
    expect(endedAfter).toBeGreaterThanOrEqual(DRAIN_MS - 100);
    expect(stream.retry()).toBeGreaterThanOrEqual(250);
    expect(stream.retry()).toBeLessThanOrEqual(1250);
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(await status(`${web.url}/healthz`)).toBe(0); // closed now
    console.log(`web: readiness 503 at once, stream ended ${endedAfter} ms after SIGTERM (retry: ${stream.retry()} ms), exited 0 after ${Date.now() - stoppedAt} ms`);
  }, 60_000);

  it('worker: liveness and readiness on its probe port, and SIGTERM ends it with exit code 0', async () => {
    const health = await fetch(`${worker.probes}/healthz`);
    expect(health.status).toBe(200);
    const ready = await (await fetch(`${worker.probes}/readyz`)).json();
    expect(ready).toMatchObject({ status: 'ready', checks: { workers: 'up', postgres: 'up', redis: 'up' } });
    const exited = once(worker.child, 'exit');
    worker.child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  }, 60_000);
});
