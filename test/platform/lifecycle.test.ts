/**
 * Shutdown order (shared/lifecycle.ts): a connection opened on first use registers after the work
 * that uses it, yet closes only once that work has finished. On the old order (every step last
 * registered first) the Redis connection was quit before the job holding it could use it again.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { isStopping, onShutdown, shutdown } from '../../shared/lifecycle.js';
import { commandRedis } from '../../shared/redis.js';

describe('shutdown order', () => {
  it('work steps finish before the connections opened after them close, and readiness fails from the start', async () => {
    const seen: string[] = [];
    // A job in flight: stopping its worker waits for it, and it still talks to Redis meanwhile.
    onShutdown('job in flight', async () => {
      seen.push(`stopping at once: ${isStopping()}`);
      await new Promise((r) => setTimeout(r, 200));
      seen.push(`job's last command: ${await conn.ping().catch((err: Error) => err.message)}`);
    });
    // The connection is made on first use, after the job registered (as the bus and stream connections are).
    const conn = commandRedis('lifecycle-test');
    expect(await conn.ping()).toBe('PONG');
    expect(isStopping()).toBe(false);

    await shutdown();
    expect(seen).toEqual(['stopping at once: true', "job's last command: PONG"]);
    // And the connection was closed after it (its quit acknowledged; the socket ends just after).
    if (conn.status !== 'end') await once(conn, 'end');
  });
});
