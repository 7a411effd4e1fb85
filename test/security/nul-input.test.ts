import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const nul = 'a\u0000b';

// PostgreSQL refuses U+0000 in text (22021) and jsonb (22P05); every route refuses it at validation instead.
const cases: Array<[string, string, string, unknown, string]> = [
  ['accounts', 'POST', '/api/v1/accounts', { name: nul }, 'body.name'],
  ['leads', 'POST', '/api/v1/leads', { first_name: 'Ada', last_name: nul, email: 'nul@example.org' }, 'body.last_name'],
  ['lead custom_data (jsonb)', 'POST', '/api/v1/leads', { first_name: 'Ada', last_name: 'L', email: 'nul2@example.org', custom_data: { note: nul } }, 'body.custom_data.note'],
  ['users', 'POST', '/api/users', { phone_number: '+14155550100', display_name: nul }, 'body.display_name'],
  ['incident rules', 'POST', '/api/v1/incidents/rules', { name: nul, matchers: [] }, 'body.name'],
  ['runbooks', 'POST', '/api/v1/runbooks', { name: 'r', webhook_url: 'http://127.0.0.1:1/webhook/x', matchers: [{ label: 'a', op: '=', value: nul }] }, 'body.matchers.0.value'],
  ['pipelines', 'POST', '/api/v1/pipelines', { name: nul, stages: [{ name: 's', probability: 10 }] }, 'body.name'],
  ['lead webhook', 'POST', '/api/v1/webhooks/leads', { first_name: nul, last_name: 'L', email: 'nul3@example.org' }, 'body.first_name'],
  ['alert sources', 'POST', '/api/v1/alerts/sources', { kind: 'alertmanager', name: 'ok', secret: nul }, 'body.secret'],
  ['a query string', 'GET', `/api/v1/leads?search=${encodeURIComponent(nul)}`, undefined, 'query.search'],
];

describe('a NUL character in any string field', () => {
  it.each(cases)('%s: 400 naming the field, never a database error', async (_name, method, path, json, field) => {
    const res = await api.request(path, { method, json, auth: true });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });

  it('an object key holding NUL is named too', async () => {
    const res = await api.request('/api/v1/leads', { method: 'POST', json: { first_name: 'Ada', last_name: 'L', email: 'nul4@example.org', custom_data: { ['k\u0000']: 1 } } });
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0].path).toBe('body.custom_data.k\u0000');
  });
});
