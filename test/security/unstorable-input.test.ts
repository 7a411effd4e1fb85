/**
 * Refused at the door: on every route that queues work, what PostgreSQL cannot store (a lone UTF-16
 * surrogate, a NUL at any depth) and a body nested past MAX_JSON_DEPTH are a 400 naming the field,
 * before anything is queued or stored; never a 500, and never a 202 the worker then drops. A good
 * request sent at the same time is served as if the bad ones did not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../helpers/chatapp.js';
import { newInteraction, newSession } from '../sessions/helpers.js';
import { fixture } from '../sre/alerting-helpers.js';
import { db } from '../../shared/db/index.js';
import { config } from '../../shared/config.js';
import { QueueWatch, queuesIdle } from '../helpers/queues.js';

configureChatapp('http://127.0.0.1:9');

let api: Platform;
let userId: string;
let sessionId: string;
let interactionId: string;
beforeAll(async () => {
  api = await startPlatform();
  ({ userId, sessionId } = await newSession(api));
  interactionId = await newInteraction(api, sessionId, 'web');
});

/** JSON text of objects nested `levels` deep (`{"d":{"d":…leaf…}}`), built as text: JSON.stringify would overflow the stack. */
const nest = (levels: number, leaf: string) => '{"d":'.repeat(levels) + leaf + '}'.repeat(levels);
const nestedPath = (at: string, levels: number) => at + '.d'.repeat(levels);

interface Route {
  name: string;
  path: () => string;
  /** The body as JSON text with the placeholder string "__X__" where the bad value goes. */
  template: () => unknown;
  /** The dotted path of the placeholder. */
  at: string;
  headers?: Record<string, string>;
  /** A good request to the same route (absent where a good one needs state this test does not build). */
  good?: () => Promise<Response>;
}

const alertmanager = () => {
  const payload = fixture('webhook-v4-firing.json');
  payload.alerts[0].annotations = { ...payload.alerts[0].annotations, summary: '__X__' };
  return payload;
};
const grafana = () => ({
  receiver: 'r',
  status: 'firing',
  alerts: [{ status: 'firing', labels: { alertname: 'Bad' }, annotations: { summary: '__X__' }, startsAt: new Date().toISOString() }],
});
const lead = (extra: unknown = {}) => ({ first_name: 'Ada', last_name: 'Lovelace', email: `${randomUUID()}@example.org`, ...(extra as object) });

const routes: Route[] = [
  {
    name: 'session message',
    path: () => `/api/sessions/${sessionId}/messages`,
    template: () => ({ channel: 'web', role: 'user', content: 'hi', interaction_id: interactionId, metadata: { m: '__X__' } }),
    at: 'body.metadata.m',
    good: () => api.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { channel: 'web', role: 'user', content: 'good', interaction_id: interactionId } }),
  },
  {
    name: 'session event',
    path: () => `/api/sessions/${sessionId}/events`,
    template: () => ({ event_type: 'TOOL_CALL', channel: 'web', data: { tool_name: 't', arguments: '__X__' } }),
    at: 'body.data.arguments',
    good: () => api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'TYPING', channel: 'web', data: { is_typing: true } } }),
  },
  {
    name: 'chatapp webhook',
    path: () => '/chatapp/webhook',
    template: () => ({ ...whatsappParams(freshPhone(), 'x'), Body: '__X__' }),
    at: 'body.Body',
    good: () => postWebhook(api.url, whatsappParams(freshPhone(), 'hello')),
  },
  {
    name: 'chatapp message send',
    path: () => '/api/chatapp/messages',
    template: () => ({ user_id: userId, text: '__X__' }),
    at: 'body.text',
  },
  {
    name: 'chatapp template send',
    path: () => '/api/chatapp/send',
    template: () => ({ user_id: userId, template_name: 'appointment_reminder', variables: { v: '__X__' } }),
    at: 'body.variables.v',
  },
  {
    name: 'web chat',
    path: () => '/api/chat',
    template: () => ({ user_id: userId, message: '__X__' }),
    at: 'body.message',
    good: () => api.request('/api/chat', { method: 'POST', json: { user_id: userId, message: 'hello' } }),
  },
  {
    name: 'lead webhook',
    path: () => '/api/v1/webhooks/leads',
    template: () => lead({ custom_data: { c: '__X__' } }),
    at: 'body.custom_data.c',
    good: () => api.request('/api/v1/webhooks/leads', { method: 'POST', json: lead(), auth: false }),
  },
  {
    name: 'lead batch',
    path: () => '/api/v1/webhooks/leads/batch',
    template: () => ({ leads: [lead(), lead({ custom_data: { c: '__X__' } })] }),
    at: 'body.leads.1.custom_data.c',
    good: () => api.request('/api/v1/webhooks/leads/batch', { method: 'POST', json: { leads: [lead(), lead()] }, auth: false }),
  },
  {
    name: 'alertmanager webhook',
    path: () => '/webhooks/alertmanager/default',
    template: alertmanager,
    at: 'body.alerts.0.annotations.summary',
    good: () => api.request('/webhooks/alertmanager/default', { method: 'POST', json: fixture('webhook-v4-firing.json'), auth: false }),
  },
  {
    name: 'grafana webhook',
    path: () => '/webhooks/grafana/default',
    template: grafana,
    at: 'body.alerts.0.annotations.summary',
    good: () => api.request('/webhooks/grafana/default', { method: 'POST', json: { ...grafana(), alerts: [{ ...grafana().alerts[0], annotations: { summary: 'fine' } }] }, auth: false }),
  },
  {
    name: 'tool execute',
    path: () => '/api/v1/tools/crm_create_lead/execute',
    template: () => ({ first_name: 'Ada', last_name: 'L', notes: '__X__' }),
    at: 'body.notes',
    good: () => api.request('/api/v1/tools/crm_create_lead/execute', { method: 'POST', json: { first_name: 'Ada', last_name: 'Good' } }),
  },
];

interface Bad {
  kind: string;
  /** JSON text of the bad value. */
  value: string;
  /** The path named: exactly (`exact`), or the field where nesting passed the limit, on the way to `towards`. */
  expect: (at: string) => { exact?: string; towards?: string };
}

const depth = () => config().input.maxJsonDepth;
const bads: Bad[] = [
  { kind: 'a lone surrogate in a string', value: '"a\\ud800b"', expect: (at) => ({ exact: at }) },
  { kind: 'a lone surrogate in a key', value: '{"k\\udc00":1}', expect: (at) => ({ exact: `${at}.k\udc00` }) },
  { kind: 'a NUL 40 levels down', value: nest(40, '"a\\u0000b"'), expect: (at) => ({ exact: nestedPath(at, 40) }) },
  { kind: 'a NUL 100 levels down', value: nest(100, '"a\\u0000b"'), expect: (at) => ({ towards: nestedPath(at, 100) }) },
  { kind: 'a body nested 20,000 levels deep', value: nest(20_000, '1'), expect: (at) => ({ towards: nestedPath(at, 20_000) }) },
];

const bodyText = (route: Route, value: string) => JSON.stringify(route.template()).replace('"__X__"', value);

const sendBad = (route: Route, bad: Bad) =>
  api.request(route.path(), { method: 'POST', body: bodyText(route, bad.value), headers: { 'Content-Type': 'application/json', ...route.headers } });

async function expectRefused(res: Response, route: Route, bad: Bad) {
  const text = await res.text();
  expect(res.status, text.slice(0, 500)).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  const paths: string[] = JSON.parse(text).errors.map((e: { path: string }) => e.path);
  const { exact, towards } = bad.expect(route.at);
  if (exact) expect(paths).toContain(exact);
  else expect(paths.some((p) => p.startsWith(route.at) && towards!.startsWith(p) && p.split('.').length <= towards!.split('.').length)).toBe(true);
}

describe('what PostgreSQL cannot store is refused at the door', () => {
  const cases = routes.flatMap((route) => bads.map((bad) => [route.name, bad.kind, route, bad] as const));
  it.each(cases)('%s, %s: 400 naming the field; a good request sent with it succeeds', async (_r, _b, route, bad) => {
    const [res, good] = await Promise.all([sendBad(route, bad), route.good?.()]);
    await expectRefused(res, route, bad);
    if (good) expect(good.status, await good.clone().text()).toBeLessThan(300);
  });

  it('a NUL in a form field of the chatapp webhook is refused too', async () => {
    const res = await postWebhook(api.url, whatsappParams(freshPhone(), 'a\u0000b'));
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path)).toContain('body.Body');
  });

  it('the nesting limit is MAX_JSON_DEPTH levels: at the limit accepted, one more refused', async () => {
    const at = `/api/sessions/${sessionId}/events`;
    const body = (levels: number) => `{"event_type":"TOOL_CALL","channel":"web","data":{"tool_name":"t","arguments":${nest(levels, '1')}}}`;
    // The body, data and arguments' own levels: 2 before the nested value.
    const ok = await api.request(at, { method: 'POST', body: body(depth() - 2), headers: { 'Content-Type': 'application/json' } });
    expect(ok.status).toBeLessThan(300);
    const deep = await api.request(at, { method: 'POST', body: body(depth() - 1), headers: { 'Content-Type': 'application/json' } });
    expect(deep.status).toBe(400);
  });

  it('a body nested 20,000 levels deep is a 400 on any route, even one without a body schema', async () => {
    for (const path of ['/api/users', '/api/v1/leads', '/mcp', '/api/global/auth/logout']) {
      const res = await api.request(path, { method: 'POST', body: nest(20_000, '1'), headers: { 'Content-Type': 'application/json' } });
      expect(res.status, path).toBe(400);
    }
  });
});

describe('nothing of a refused request is queued or stored', () => {
  let watch: QueueWatch;
  afterAll(() => watch?.close());

  async function rowCounts(): Promise<Record<string, number>> {
    const tables = await db().select('table_name').from('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' });
    const counts: Record<string, number> = {};
    for (const { table_name } of tables as Array<{ table_name: string }>) {
      const [row] = await db()(table_name).count({ n: '*' });
      counts[table_name] = Number(row!.n);
    }
    return counts;
  }

  it('every bad body of every route: no job added to any queue, no row written', async () => {
    watch = await QueueWatch.start();
    // The jobs of the earlier tests' good requests finish first, so their rows are in the counts before.
    await queuesIdle();
    const before = await rowCounts();
    watch.added.length = 0;
    const responses = await Promise.all(routes.flatMap((route) => bads.map((bad) => sendBad(route, bad))));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 400));
    // Every queue's listener has read all that was written before its sentinel: a job a refused request added is in `added` by now.
    await watch.sentinel();
    expect(watch.added).toEqual([]);
    expect(await rowCounts()).toEqual(before);
  });
});
