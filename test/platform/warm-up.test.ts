import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { warmUp, warmUpState } from '../../api/platform/warm-up.js';
import { db } from '../../shared/db/index.js';
import { config } from '../../shared/config.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

describe('start-up warm-up', () => {
  it('/readyz answers 503 naming the warm-up while it runs, 200 once it is done, with the pool opened to DATABASE_POOL_MIN', async () => {
    const warming = warmUp(api.url);
    const during = await api.request('/readyz', { auth: false });
    expect(during.status).toBe(503);
    const body = await during.json();
    expect(body.detail).toBe('Not ready: warm_up pending.');
    expect(body.checks).toEqual({ postgres: 'up', redis: 'up', migrations: 'current', warm_up: 'pending' });

    await warming;
    const after = await api.request('/readyz', { auth: false });
    expect(after.status).toBe(200);
    expect((await after.json()).checks.warm_up).toBe('done');
    const pool = (db().client as { pool: { numFree(): number; numUsed(): number } }).pool;
    expect(pool.numFree() + pool.numUsed()).toBeGreaterThanOrEqual(config().db.poolMin);
  });

  it('goes through a worker end to end and leaves nothing behind: its internal users, sessions, messages and audit rows are deleted', async () => {
    await warmUp(api.url);
    expect(warmUpState()).toBe('done');
    for (const table of ['users', 'sessions', 'session_interactions', 'session_messages', 'session_events']) {
      const rows = await db()(table).count({ count: '*' });
      expect(Number(rows[0]?.count), table).toBe(0);
    }
  });
});
