import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { up as disableNonRe2Matchers } from '../../migrations/20261123002000_non_re2_matchers.js';

process.env.AUTOMATION_URL = 'http://127.0.0.1:1';
process.env.DATABASE_STATEMENT_TIMEOUT_MS = '700';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

// Exponential with a backtracking engine (> 20 s on a 300-character label in Postgres); not RE2 at all.
const backtracking = '^(.*)(.*)(.*)(.*)\\1\\2\\3\\4$';
let seq = 0;
const rule = (matchers: unknown) => api.request('/api/v1/incidents/rules', { method: 'POST', json: { name: `rule-${++seq}`, matchers } });
const runbook = (matchers: unknown) => api.request('/api/v1/runbooks', { method: 'POST', json: { name: `rb-${++seq}`, webhook_url: '/webhook/x', matchers } });
const paths = async (res: Response) => (await res.json()).errors.map((e: { path: string }) => e.path);

describe('matchers of incident rules and runbooks (Alertmanager semantics: RE2)', () => {
  it.each([
    ['back-references', backtracking],
    ['look-ahead', '(?=web).*'],
    ['an unbalanced group', '('],
  ])('%s are a 400 naming the field, for rules and runbooks, on create and change', async (_name, value) => {
    const matchers = [{ label: 'alertname', value: 'X' }, { label: 'instance', op: '=~', value }];
    const a = await rule(matchers);
    expect(a.status).toBe(400);
    expect(await paths(a)).toEqual(['body.matchers.1.value']);
    const b = await runbook(matchers);
    expect(b.status).toBe(400);
    expect(await paths(b)).toEqual(['body.matchers.1.value']);

    const ok = await (await rule([])).json();
    const patch = await api.request(`/api/v1/incidents/rules/${ok.id}`, { method: 'PATCH', json: { matchers: [{ label: 'x', op: '!~', value }] } });
    expect(patch.status).toBe(400);
    expect(await paths(patch)).toEqual(['body.matchers.0.value']);
  });

  it('patterns are bounded in length', async () => {
    const res = await rule([{ label: 'instance', op: '=~', value: 'a'.repeat(1001) }]);
    expect(res.status).toBe(400);
    expect(await paths(res)).toEqual(['body.matchers.0.value']);
  });

  it('RE2 patterns are accepted', async () => {
    expect((await rule([{ label: 'instance', op: '=~', value: 'web-[0-9]+|db-.*' }])).status).toBe(201);
    expect((await runbook([{ label: 'job', op: '!~', value: '(?:node|blackbox)' }])).status).toBe(201);
  });

  it('database statements have a time limit (DATABASE_STATEMENT_TIMEOUT_MS)', async () => {
    expect((await db().raw('show statement_timeout')).rows[0].statement_timeout).toBe('700ms');
    await expect(db().raw('select pg_sleep(3)')).rejects.toMatchObject({ code: '57014' });
  });

  it('rules and runbooks stored earlier with a pattern RE2 refuses are disabled by the migration', async () => {
    const bad = JSON.stringify([{ label: 'instance', op: '=~', value: backtracking }]);
    const good = JSON.stringify([{ label: 'instance', op: '=~', value: 'web-.*' }]);
    const [badRule] = await db()('sre_incident_rules').insert({ name: 'legacy-bad', matchers: bad }).returning('id');
    const [goodRule] = await db()('sre_incident_rules').insert({ name: 'legacy-good', matchers: good }).returning('id');
    const [badRunbook] = await db()('sre_runbooks').insert({ name: 'legacy-bad', webhook_url: '/webhook/x', matchers: bad, parameters: '{}' }).returning('id');
    await disableNonRe2Matchers(db());
    const enabled = async (table: string, id: string) => (await db()(table).where({ id }).first()).enabled;
    expect(await enabled('sre_incident_rules', badRule.id)).toBe(false);
    expect(await enabled('sre_incident_rules', goodRule.id)).toBe(true);
    expect(await enabled('sre_runbooks', badRunbook.id)).toBe(false);
  });
});
