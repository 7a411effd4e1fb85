/**
 * Dependency outages: what a failing Redis or PostgreSQL looks like to a
 * client (503 problem+json with Retry-After, within the bounds), and the start-up check of Redis'
 * durability against real redis-server processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRouter } from '../../api/routing.js';
import { knexOptions } from '../../shared/db/index.js';
import { checkRedisDurability, readRedisDurability } from '../../shared/redis.js';
import { z } from '../../shared/zod.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { freePort } from '../helpers/ports.js';

let deadPort: number;
// Routes that meet a real unavailable dependency: nothing listens on deadPort.
const probe = new ApiRouter()
  .route({
    method: 'get',
    path: '/api/test/outage/postgres',
    tags: ['test'],
    summary: 'a query against a PostgreSQL that is down',
    auth: 'key-or-sre',
    responses: { 200: { description: 'never', schema: z.object({}) } },
    handler: async () => {
      const k = knexFactory(knexOptions(`postgres://postgres@127.0.0.1:${deadPort}/x`, 1, { connectMs: 300, acquireMs: 600 }));
      try {
        await k.raw('select 1');
        return {};
      } finally {
        await k.destroy();
      }
    },
  })
  .route({
    method: 'get',
    path: '/api/test/outage/redis',
    tags: ['test'],
    summary: 'a command to a Redis that is down',
    auth: 'key-or-sre',
    responses: { 200: { description: 'never', schema: z.object({}) } },
    handler: async () => {
      const conn = new Redis({ port: deadPort, maxRetriesPerRequest: 0, retryStrategy: () => 100, connectTimeout: 300 });
      conn.on('error', () => undefined);
      try {
        await conn.get('x');
        return {};
      } finally {
        conn.disconnect();
      }
    },
  });

let api: Platform;
const redises: ChildProcess[] = [];
const dirs: string[] = [];
beforeAll(async () => {
  deadPort = await freePort();
  api = await startPlatform({ workers: false, routers: [probe] });
});
afterAll(() => {
  redises.forEach((r) => r.kill('SIGTERM'));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe('a dependency that is down', () => {
  for (const dep of ['postgres', 'redis']) {
    it(`${dep}: 503 problem+json with Retry-After, within 2 s`, async () => {
      const started = Date.now();
      const res = await api.request(`/api/test/outage/${dep}`);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.headers.get('retry-after')).toBe('2');
      const body = await res.json();
      expect(body).toMatchObject({ status: 503, type: expect.stringContaining('unavailable') });
    });
  }
});

async function redisServer(args: string[]): Promise<Redis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-redis-'));
  dirs.push(dir);
  redises.push(spawn('timeout', ['60', 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args], { stdio: 'ignore' }));
  const conn = new Redis({ port, retryStrategy: () => 100 });
  conn.on('error', () => undefined);
  await conn.ping();
  return conn;
}

describe('Redis durability at start-up', () => {
  it('names missing persistence and an evicting policy; accepts AOF with noeviction', async () => {
    const volatile = await redisServer(['--save', '', '--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru']);
    const found = await readRedisDurability(volatile);
    expect(found.problems).toHaveLength(2);
    expect(found.problems.join(' ')).toMatch(/persistence is off.*allkeys-lru.*noeviction/);
    volatile.disconnect();
    const durable = await redisServer(['--save', '', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction']);
    expect((await readRedisDurability(durable)).problems).toEqual([]);
    durable.disconnect();
  });

  it('refuses to start in production against the volatile Redis unless allowed; warns otherwise', async () => {
    // The machine's Redis runs with --save "" --appendonly no, as CI's does.
    const conn = new Redis({ host: process.env.BUS_HOST ?? '127.0.0.1', port: Number(process.env.BUS_PORT ?? 6379) });
    const volatile = (await readRedisDurability(conn)).problems.length > 0;
    conn.disconnect();
    if (!volatile) return; // a durable Redis has nothing to refuse
    await expect(checkRedisDurability(() => undefined, { production: true, allowVolatile: false })).rejects.toThrow(/Refusing to start in production.*REDIS_ALLOW_VOLATILE/);
    const warnings: string[] = [];
    await checkRedisDurability((m) => warnings.push(m), { production: true, allowVolatile: true });
    await checkRedisDurability((m) => warnings.push(m), { production: false, allowVolatile: false });
    expect(warnings).toHaveLength(2);
  });
});
