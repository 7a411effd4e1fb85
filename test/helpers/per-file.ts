/**
 * Before each test file: its own database (cloned from the migrated template) and its own BullMQ
 * prefix, set in the environment before any platform module reads its configuration. After the
 * file: connections closed, the database dropped, the prefix's Redis keys deleted.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { cloneTemplate, dropDatabase, serverUrl } from './databases.js';
import { deleteKeysWithPrefix, redisAddress } from './redis-keys.js';

const database = await cloneTemplate(inject('templateDatabase'), inject('testRunId'));
const prefix = `sbtest-${randomBytes(5).toString('hex')}`;
// Captured now: a test may repoint BUS_* at a Redis of its own.
const redisAt = redisAddress();
process.env.DATABASE_URL = serverUrl(database);
process.env.QUEUE_PREFIX = prefix;
process.env.NODE_ENV = 'test';
process.env.SERVICE_SESSION_SYSTEM ??= 'true';
process.env.WORKER_METRICS_PORT = '0';

afterAll(async () => {
  const { shutdownWithin } = await import('../../shared/lifecycle.js');
  const { closeDb } = await import('../../shared/db/index.js');
  const { closeQueues } = await import('../../shared/queues.js');
  // Bounded as a role's shutdown is (a test may have killed the Redis it used): what is still
  // running at the deadline is logged, and the file's database and keys are removed all the same.
  await shutdownWithin(20_000);
  await closeQueues();
  await closeDb();
  await dropDatabase(database);
  await deleteKeysWithPrefix(prefix, redisAt);
});
