import { spawn, type ChildProcess } from 'node:child_process';
import { eventually } from '../helpers/eventually.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { freePort } from '../helpers/ports.js';

// This file brings its own Redis, so it can stop it without disturbing other test files.
let redis: ChildProcess;
let api: Platform;
let port: number;
// Bounded by `timeout`, so a Redis still up when the test process ends stops by itself.
const startRedis = () =>
  spawn('timeout', ['60', 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
beforeAll(async () => {
  port = await freePort();
  redis = startRedis();
  await eventually(async () => {
    const probe = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
    const ok = await probe.connect().then(() => true, () => false);
    probe.disconnect();
    return ok;
  }, 5_000, 'redis-server to accept connections');
  process.env.BUS_PORT = String(port);
  process.env.BUS_HOST = '127.0.0.1';
  api = await startPlatform({ workers: false });
});
// Back up before the per-file teardown closes the queue connections against it.
afterAll(() => {
  redis = startRedis();
});

describe('readiness', () => {
  it('is ready with Postgres, Redis and current migrations, and answers 503 naming Redis once it stops', async () => {
    const up = await api.request('/readyz', { auth: false });
    expect(up.status).toBe(200);

    redis.kill('SIGTERM');
    await new Promise((resolve) => redis.once('exit', resolve));
    const down = await api.request('/readyz', { auth: false });
    expect(down.status).toBe(503);
    const body = await down.json();
    expect(body.detail).toBe('Not ready: redis down.');
    expect(body.checks).toEqual({ postgres: 'up', redis: 'down', migrations: 'current' });
    expect((await api.request('/healthz', { auth: false })).status).toBe(200);
  });
});
