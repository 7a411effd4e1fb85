/**
 * Before each test file: its own database (cloned from the migrated template) and its own BullMQ
 * prefix, set in the environment before any platform module reads its configuration. After the
 * file: connections closed, the database dropped, the prefix's Redis keys deleted.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { Redis } from 'ioredis';
import { cloneTemplate, dropDatabase, serverUrl } from './databases.js';

const database = await cloneTemplate(inject('templateDatabase'));
const prefix = `sbtest-${randomBytes(5).toString('hex')}`;
// Captured now: a test may repoint BUS_* at a Redis of its own.
const redisAt = { host: process.env.BUS_HOST ?? '127.0.0.1', port: Number(process.env.BUS_PORT ?? 6379), password: process.env.BUS_PASSWORD || undefined };
process.env.DATABASE_URL = serverUrl(database);
process.env.QUEUE_PREFIX = prefix;
process.env.NODE_ENV = 'test';
process.env.SERVICE_SESSION_SYSTEM ??= 'true';
process.env.WORKER_METRICS_PORT = '0';

afterAll(async () => {
  const { shutdown } = await import('../../shared/lifecycle.js');
  const { closeDb } = await import('../../shared/db/index.js');
  const { closeQueues } = await import('../../shared/queues.js');
  await shutdown();
  await closeQueues();
  await closeDb();
  await dropDatabase(database);
  const redis = new Redis(redisAt);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.unlink(...keys);
  } while (cursor !== '0');
  redis.disconnect();
});
