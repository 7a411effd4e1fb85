import { beforeAll, describe, expect, it } from 'vitest';
import { ApiRouter } from '../../api/routing.js';
import { z } from '../../shared/zod.js';
import { ConflictError } from '../../shared/errors.js';
import { registry } from '../../shared/queues.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';

// A router that exercises the conventions the domains rely on.
const probe = new ApiRouter().route({
  method: 'post',
  path: '/api/test/widgets/{widget_id}',
  tags: ['test'],
  summary: 'convention probe',
  auth: 'key-or-sre',
  request: {
    params: z.object({ widget_id: z.guid() }),
    query: z.object({ limit: z.coerce.number().int().max(10).optional() }),
    body: z.object({ name: z.string().min(1), size: z.number().int().positive() }),
  },
  responses: { 201: { description: 'created', schema: z.object({ id: z.string() }) } },
  errors: { 409: 'already exists' },
  handler: ({ params, body }) => {
    if (body.name === 'taken') throw new ConflictError('A widget with that name exists.', [], { existing: 'w1' });
    return { id: params.widget_id };
  },
});

// A second router serving another method of the same path: allowed methods are gathered across routers.
const reader = new ApiRouter().route({
  method: 'get',
  path: '/api/test/widgets/{widget_id}',
  tags: ['test'],
  summary: 'convention probe, read',
  auth: 'key-or-sre',
  request: { params: z.object({ widget_id: z.guid() }) },
  responses: { 200: { description: 'the widget', schema: z.object({ id: z.string() }) } },
  handler: ({ params }) => ({ id: params.widget_id }),
});

let api: Platform;
beforeAll(async () => {
  process.env.BODY_LIMIT = '2kb';
  api = await startPlatform({ workers: false, routers: [probe, reader] });
});

const id = '3f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10';

describe('HTTP conventions', () => {
  it('every response carries X-Request-Id, echoing a sane caller id', async () => {
    const own = await api.request('/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(own.headers.get('x-request-id')).toBe('abc-123');
    const generated = await api.request('/healthz', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('validation failures are 400 problem+json naming each bad field', async () => {
    const res = await api.request('/api/test/widgets/not-a-uuid?limit=99', { method: 'POST', json: { name: '', size: -1 } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const body = await res.json();
    expect(body).toMatchObject({ type: expect.stringContaining('validation'), title: 'Bad Request', status: 400, request_id: res.headers.get('x-request-id') });
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.name', 'body.size', 'params.widget_id', 'query.limit']);
  });

  it('malformed JSON is a 400, not a 500', async () => {
    const res = await api.request(`/api/test/widgets/${id}`, { method: 'POST', body: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toMatch(/not valid JSON/);
  });

  it('a body over the limit is a 413', async () => {
    const res = await api.request(`/api/test/widgets/${id}`, { method: 'POST', json: { name: 'x'.repeat(5000), size: 1 } });
    expect(res.status).toBe(413);
    expect((await res.json()).status).toBe(413);
  });

  it('domain errors map through the error table, with their extensions', async () => {
    const res = await api.request(`/api/test/widgets/${id}`, { method: 'POST', json: { name: 'taken', size: 1 } });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ title: 'Conflict', detail: 'A widget with that name exists.', existing: 'w1' });
  });

  it('service routes need an API key, in X-API-Key or as a bearer token', async () => {
    expect((await api.request(`/api/test/widgets/${id}`, { method: 'POST', json: { name: 'a', size: 1 }, auth: false })).status).toBe(401);
    const wrong = await api.request(`/api/test/widgets/${id}`, { method: 'POST', json: { name: 'a', size: 1 }, headers: { 'X-API-Key': 'nope' } });
    expect(wrong.status).toBe(401);
    const bearer = await api.request(`/api/test/widgets/${id}`, { method: 'POST', json: { name: 'a', size: 1 }, headers: { Authorization: `Bearer ${testApiKey}` } });
    expect(bearer.status).toBe(201);
    expect(await bearer.json()).toEqual({ id });
  });

  it('unknown routes are a 404 problem', async () => {
    const res = await api.request('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ status: 404, title: 'Not Found' });
  });

  it('a path served with other methods is a 405 naming them; OPTIONS lists them; an unknown method is a 501', async () => {
    const wrong = await api.request(`/api/test/widgets/${id}`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, HEAD, GET');
    const options = await api.request(`/api/test/widgets/${id}`, { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([200, 'POST, HEAD, GET']);
    const unknown = await api.request('/api/nothing-here', { method: 'PROPFIND' });
    expect(unknown.status).toBe(501);
  });

  it('paths match whatever their case, also in the last router mounted', async () => {
    const res = await api.request(`/API/Test/WIDGETS/${id}`, { method: 'POST', json: { name: 'w', size: 1 } });
    expect([res.status, await res.json()]).toEqual([201, { id }]);
    const read = await api.request(`/api/TEST/widgets/${id}`);
    expect([read.status, await read.json()]).toEqual([200, { id }]);
  });

  it('the API reference documents each route with its auth and error responses', async () => {
    const doc = await (await api.request('/api/openapi.json')).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    const op = doc.paths['/api/test/widgets/{widget_id}'].post;
    expect(Object.keys(op.responses).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413']);
    // A route under no prefix of the scope table needs a full-access key (scope *).
    expect(op.security).toEqual([{ ApiKey: ['*'] }, { Bearer: ['*'] }, { Session: [] }]);
    expect(doc.paths['/readyz'].get).toBeDefined();
    const page = await api.request('/api/docs');
    expect(await page.text()).toContain('swagger-ui-bundle.js');
    const asset = await api.request('/api/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(100_000);
  });
});

describe('health and metrics', () => {
  it('/healthz answers while the process is up', async () => {
    expect(await (await api.request('/healthz', { auth: false })).json()).toEqual({ status: 'ok' });
  });

  it('/readyz reports Postgres, Redis, migrations ', async () => {
    const res = await api.request('/readyz', { auth: false });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: 'up', migrations: 'current' } });
  });

  it('/api/health needs the API key', async () => {
    expect((await api.request('/api/health', { auth: false })).status).toBe(401);
    expect(await (await api.request('/api/health')).json()).toMatchObject({ status: 'ready' });
  });

  it('/metrics exposes request durations by route and per-queue counts', async () => {
    await api.request('/healthz');
    const text = await (await api.request('/metrics', { auth: false })).text();
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toMatch(/queue_jobs\{queue="sessions",state="failed"\} 0/);
  });
});

describe('queue dashboard', () => {
  it('needs admin credentials and lists every queue', async () => {
    expect((await api.request('/admin/queues', { auth: false })).status).toBe(401);
    const basic = { Authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` };
    expect((await api.request('/admin/queues', { headers: basic })).status).toBe(401);
    const admin = { Authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` };
    const page = await api.request('/admin/queues', { headers: admin });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    const queues = await (await api.request('/admin/queues/api/queues', { headers: admin })).json();
    expect(queues.queues.map((q: { name: string }) => q.name).sort()).toEqual(Object.keys(registry.queues).sort());
    expect(Object.keys(registry.queues)).toEqual(expect.arrayContaining(['chatapp', 'crm', 'discovery', 'sessions', 'sre']));
  });
});
