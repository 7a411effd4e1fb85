/** Redis connections: one factory, so every connection has the same host, password and naming. */
import { Redis, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { config } from './config.js';
import { onShutdown } from './lifecycle.js';

/** Connection options shared by queues, workers and the bus. */
export function redisOptions(extra: RedisOptions = {}): RedisOptions {
  const { host, port, password } = config().redis;
  return { host, port, password, lazyConnect: false, ...extra };
}

/** A new Redis connection; `name` shows in CLIENT LIST. */
export function createRedis(name: string, extra: RedisOptions = {}): Redis {
  return new Redis(redisOptions({ connectionName: `switchboard:${name}`, ...extra }));
}

const commandConnections = new Map<string, Redis>();

/** The process's one command connection of a module (made on first use, closed at shutdown). */
export function commandRedis(name: string): Redis {
  let conn = commandConnections.get(name);
  if (!conn) {
    const created = createRedis(`${name}:${process.pid}`);
    commandConnections.set(name, (conn = created));
    onShutdown(`${name} redis`, () => {
      if (commandConnections.get(name) === created) commandConnections.delete(name);
      return created.quit().then(() => undefined, () => created.disconnect());
    });
  }
  return conn;
}

/** Answers whether Redis replies to PING within the timeout. */
export async function pingRedis(timeoutMs = 1000): Promise<boolean> {
  const probe = createRedis('probe', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, enableOfflineQueue: false });
  probe.on('error', () => {}); // the outcome is the answer; nothing to report
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Connection options for BullMQ queues and workers (workers need maxRetriesPerRequest: null). */
export function bullConnection(extra: RedisOptions = {}): ConnectionOptions {
  return redisOptions(extra) as ConnectionOptions;
}
