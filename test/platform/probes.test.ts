/**
 * Probes that mean what they say (shared/probes.ts, api/platform/health.routes.ts): liveness answers
 * while the process does, readiness names each dependency and goes through the process's own
 * connections (the web role's /readyz opens no Redis connection per probe: on the old code each
 * probe made one and dropped it, so none stayed), every role has both, and readiness fails from
 * the first moment of a shutdown while liveness still answers.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPlatform } from '../helpers/platform.js';
import { redisAddress } from '../helpers/redis-keys.js';
import { onShutdown, shutdown } from '../../shared/lifecycle.js';
import { startProbeServer } from '../../shared/probes.js';
import { startToolServer } from '../../api/tools-server/server.js';
import { serviceTokens } from '../../api/tools-server/auth.js';

/** The connections of this process named for probes, as Redis lists them. */
async function probeConnections(): Promise<number> {
  const admin = new Redis(redisAddress());
  try {
    const list = (await admin.client('LIST')) as string;
    return list.split('\n').filter((l) => l.includes(`name=switchboard:probe:${process.pid} `)).length;
  } finally {
    admin.disconnect();
  }
}

describe('probes', () => {
  it('web: /healthz is the process only; /readyz checks PostgreSQL, Redis and migrations through one kept connection', async () => {
    const api = await startPlatform({ workers: false });
    expect((await api.request('/healthz', { auth: false })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const ready = await api.request('/readyz', { auth: false });
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { postgres: 'up', redis: 'up', migrations: 'current' } });
    }
    expect(await probeConnections()).toBe(1);
  });

  it('a role without the router (worker, email): /readyz names the check that is down with 503, /healthz still answers', async () => {
    let redis: 'up' | 'down' = 'up';
    const { port } = await startProbeServer({ name: 'test', port: 0, host: '127.0.0.1', checks: async () => ({ redis }) });
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', checks: { redis: 'up' } });
    redis = 'down';
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'not_ready', checks: { redis: 'down' } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });

  it('from the first moment of a shutdown every role is not ready while liveness answers (web, tools, probe server)', async () => {
    const api = await startPlatform({ workers: false });
    const tools = await startToolServer({ port: 0, host: '127.0.0.1', auth: serviceTokens(['svc-token-for-probes']) });
    const { port } = await startProbeServer({ name: 'test', port: 0, host: '127.0.0.1', checks: async () => ({}) });
    const probes = `http://127.0.0.1:${port}`;
    expect((await fetch(`${tools.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${probes}/readyz`)).status).toBe(200);

    // A job in flight keeps the shutdown in its work phase while the probes are asked.
    let release!: () => void;
    onShutdown('job in flight', () => new Promise<void>((resolve) => (release = resolve)));
    const stopped = shutdown();
    expect((await fetch(`${probes}/readyz`)).status).toBe(503);
    expect((await fetch(`${probes}/healthz`)).status).toBe(200);
    expect((await fetch(`${tools.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${tools.url}/healthz`)).status).toBe(200);
    const web = await api.request('/readyz', { auth: false });
    expect(web.status).toBe(503);
    expect((await web.json()).detail).toMatch(/stopping/);
    release();
    await stopped;
    await tools.close();
  });
});
