/**
 * A mistyped filter is an error, never "everything": every GET route answers 400 naming a query
 * parameter it does not know (problem+json, `errors[].path` = `query.<name>`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

describe('strict query parameters', () => {
  it('GET /api/v1/leads?search=x is a 400 naming query.search instead of every lead', async () => {
    await api.request('/api/v1/leads', { method: 'POST', json: { first_name: 'Kept', last_name: 'Lead', company: 'Safe Co', email: 'kept@example.com' } });
    const res = await api.request('/api/v1/leads?search=x');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect((await res.json()).errors).toEqual([{ path: 'query.search', message: 'unknown query parameter' }]);
    // Known filters still work, and a known and an unknown one together still fail.
    expect((await api.request('/api/v1/leads?status=new')).status).toBe(200);
    expect((await api.request('/api/v1/leads?status=new&stauts=won')).status).toBe(400);
  });

  it('every GET route of the API reference refuses an unknown query parameter by name', async () => {
    const doc = await (await api.request('/api/openapi.json', { auth: false })).json();
    const refused: string[] = [];
    const accepted: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { security?: Array<Record<string, string[]>> }>>)) {
      const get = ops.get;
      if (!get) continue;
      // Routes only a browser session may call answer 401 to a key before reading the query.
      if (get.security?.length && !get.security.some((s) => 'ApiKey' in s)) continue;
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000') + '?no_such_filter=1';
      const res = await api.request(url, { signal: AbortSignal.timeout(5000) });
      const body = res.status === 400 ? await res.json() : await res.body?.cancel();
      if (res.status === 400 && body.errors.some((e: { path: string }) => e.path === 'query.no_such_filter')) refused.push(path);
      else accepted.push(`${path} → ${res.status}`);
    }
    expect(accepted).toEqual([]);
    expect(refused.length).toBeGreaterThan(40);
  });
});
