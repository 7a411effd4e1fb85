import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { newSession } from '../sessions/helpers.js';
import { eventually } from '../helpers/eventually.js';

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

/**
 * Open streams with their responses. The response must stay referenced: fetch cancels the body of a
 * Response that is garbage-collected unread, which closes the connection and frees the server's place
 * (a collection between two opens on a loaded machine let an over-cap open through).
 */
const opened: Array<{ controller: AbortController; res: Response }> = [];
afterEach(async () => {
  opened.splice(0).forEach((o) => o.controller.abort());
  await eventually(async () => (await openStreamGauge()) === 0, 10_000, 'every stream of the test released');
});

async function openStream(sessionId: string, key: string): Promise<Response> {
  const controller = new AbortController();
  const res = await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=chat`, { headers: { 'X-API-Key': key }, signal: controller.signal });
  if (res.status === 200) opened.push({ controller, res });
  return res;
}

/** The server's count of open session streams (the switchboard_session_sse_streams gauge, which moves with the caps' count). */
async function openStreamGauge(): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`, { headers: { Authorization: 'Bearer scrape-token' } })).text();
  return Number(/^switchboard_session_sse_streams (\d+)$/m.exec(text)?.[1]);
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

    // The server frees the place when it sees the connection close: wait for that, then open once.
    expect(await openStreamGauge()).toBe(3);
    opened.shift()!.controller.abort();
    await eventually(async () => (await openStreamGauge()) === 2, 10_000, 'the aborted stream released');
    expect((await openStream(sessionId, 'test-key')).status).toBe(200);
  });

  it('concurrent opens never get past the caps', async () => {
    const { sessionId } = await newSession(api);
    const statuses = await Promise.all(Array.from({ length: 6 }, (_, i) => openStream(sessionId, i % 2 ? otherKey : 'test-key').then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(await openStreamGauge()).toBe(3);
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
