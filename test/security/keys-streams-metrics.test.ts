import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { newSession } from '../sessions/helpers.js';

// Every timingSafeEqual call of the platform is recorded, to see what is compared and how.
const compared = vi.hoisted(() => [] as Array<[number, number]>);
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  const timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push([a.byteLength, b.byteLength]);
    return real.timingSafeEqual(a, b);
  };
  return { ...real, default: { ...real, timingSafeEqual }, timingSafeEqual };
});

const otherKey = 'another-much-longer-api-key-for-the-second-integration';
process.env.API_KEYS = `test-key,${otherKey}`;
process.env.SSE_MAX_STREAMS_PER_KEY = '2';
process.env.SSE_MAX_STREAMS = '3';
process.env.METRICS_TOKEN = 'scrape-token';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const opened: AbortController[] = [];
afterEach(() => opened.splice(0).forEach((c) => c.abort()));

async function openStream(sessionId: string, key: string): Promise<Response> {
  const controller = new AbortController();
  const res = await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=chat`, { headers: { 'X-API-Key': key }, signal: controller.signal });
  if (res.status === 200) opened.push(controller);
  return res;
}

describe('API key checks', () => {
  it('compare fixed-length digests against every configured key, whatever the length of the key presented', async () => {
    for (const presented of ['x', 'test-kex', 'y'.repeat(500)]) {
      compared.length = 0;
      expect((await api.request('/api/v1/accounts', { headers: { 'X-API-Key': presented } })).status).toBe(401);
      expect(compared).toEqual([
        [32, 32],
        [32, 32],
      ]);
    }
    expect((await api.request('/api/v1/accounts', { headers: { 'X-API-Key': otherKey } })).status).toBe(200);
  });
});

describe('SSE stream caps', () => {
  it('a key over SSE_MAX_STREAMS_PER_KEY and a process over SSE_MAX_STREAMS get 429 with Retry-After; a closed stream frees its place', async () => {
    const { sessionId } = await newSession(api);
    expect((await openStream(sessionId, 'test-key')).status).toBe(200);
    expect((await openStream(sessionId, 'test-key')).status).toBe(200);
    const perKey = await openStream(sessionId, 'test-key');
    expect(perKey.status).toBe(429);
    expect(Number(perKey.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await perKey.json()).detail).toContain('SSE_MAX_STREAMS_PER_KEY');

    expect((await openStream(sessionId, otherKey)).status).toBe(200);
    const perProcess = await openStream(sessionId, otherKey);
    expect(perProcess.status).toBe(429);
    expect((await perProcess.json()).detail).toContain('SSE_MAX_STREAMS');

    opened.shift()!.abort();
    let again: Response | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await openStream(sessionId, 'test-key');
    }
    expect(again?.status).toBe(200);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  it('requires the bearer token', async () => {
    expect((await fetch(`${api.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${api.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await fetch(`${api.url}/metrics`, { headers: { Authorization: 'Bearer scrape-token' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('http_request_duration_seconds');
  });
});
