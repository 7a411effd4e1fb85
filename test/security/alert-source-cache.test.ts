import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { authenticateSource, cachedSourceCount, forgetSources, sourceCacheMax } from '../../shared/sre/alerts/alert-source.store.js';

process.env.ALERT_WEBHOOK_TOKEN = 'cache-test-token';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const post = (source: string) =>
  api.request(`/webhooks/alertmanager/${source}`, { method: 'POST', auth: false, headers: { Authorization: 'Bearer cache-test-token', 'Content-Type': 'application/json' }, body: '{}' });

describe('alert-source lookup from anonymous webhook calls', () => {
  it('a name no source can have is a 404 before any lookup, and is not cached', async () => {
    forgetSources();
    for (let i = 0; i < 50; i++) expect((await post(`${'x'.repeat(2000)}${i}`)).status).toBe(404);
    expect((await post('Upper_Case')).status).toBe(404);
    expect(cachedSourceCount()).toBe(0);
    expect((await post('default')).status).toBe(400); // known source, empty body: validation, not 404
    expect(cachedSourceCount()).toBe(1);
  });

  it('many unknown names do not grow the cache past its cap', async () => {
    forgetSources();
    const names = Array.from({ length: sourceCacheMax * 3 }, (_, i) => `unknown-${i}-${'n'.repeat(40)}`);
    for (let i = 0; i < names.length; i += 100) {
      await Promise.all(names.slice(i, i + 100).map((name) => authenticateSource('alertmanager', name, 'cache-test-token').catch((e) => e)));
    }
    expect(cachedSourceCount()).toBeLessThanOrEqual(sourceCacheMax);
    expect(cachedSourceCount()).toBeGreaterThan(0);
  });
});
