import { Redis } from 'ioredis';

export interface RedisAddress {
  host: string;
  port: number;
  password?: string;
}

/** The Redis a test or benchmark uses (BUS_* or the local default), read from an environment. */
export function redisAddress(env: NodeJS.ProcessEnv = process.env): RedisAddress {
  return { host: env.BUS_HOST ?? '127.0.0.1', port: Number(env.BUS_PORT ?? 6379), password: env.BUS_PASSWORD || undefined };
}

/** Deletes every key under a queue prefix (a test file's or a benchmark's own). */
export async function deleteKeysWithPrefix(prefix: string, at: RedisAddress = redisAddress()): Promise<void> {
  const redis = new Redis(at);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
