import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';

let api: Platform;
let pipelineId: string;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
  // A pipeline of its own, so the summary is computed over exactly the opportunities of this test.
  const res = await api.request('/api/v1/pipelines', {
    method: 'POST',
    json: { name: 'Forecast', stages: [{ name: 'Lead', probability: 10 }, { name: 'Proposal', probability: 50 }, { name: 'Won', probability: 100 }, { name: 'Lost', probability: 0 }] },
  });
  pipelineId = (await res.json()).id;
});

const create = (json: Record<string, unknown>) => api.request('/api/v1/opportunities', { method: 'POST', json });

describe('opportunities', () => {
  it('the default pipeline has the spec\'s six stages and probabilities, in order', async () => {
    const { data } = await (await api.request('/api/v1/pipelines')).json();
    const def = data.find((p: { is_default: boolean }) => p.is_default);
    expect(def.stages.map((s: { name: string; probability: number }) => [s.name, s.probability])).toEqual([
      ['Lead', 10], ['Discovery', 25], ['Proposal', 50], ['Negotiation', 75], ['Closed Won', 100], ['Closed Lost', 0],
    ]);
  });

  it('probability defaults to the stage\'s; without a stage the first stage is used', async () => {
    const a = await (await create({ name: 'A', stage: 'negotiation', amount: 100 })).json();
    expect(a).toMatchObject({ stage: 'Negotiation', probability: 75 });
    const b = await (await create({ name: 'B' })).json();
    expect(b).toMatchObject({ stage: 'Lead', probability: 10, amount: 0 });
    const c = await (await create({ name: 'C', stage: 'Proposal', probability: 60 })).json();
    expect(c.probability).toBe(60);
  });

  it('a stage outside the pipeline is a 400 listing the valid stages', async () => {
    const res = await create({ name: 'X', pipeline_id: pipelineId, stage: 'Negotiation' });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.valid_stages).toEqual(['Lead', 'Proposal', 'Won', 'Lost']);
    expect(body.errors).toEqual([{ path: 'body.stage', message: 'must be one of: Lead, Proposal, Won, Lost' }]);
  });

  it('amount must be ≥ 0 and probability 0 to 100', async () => {
    const res = await create({ name: 'X', amount: -1, probability: 101 });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.amount', 'body.probability']);
    expect((await create({ name: 'X', probability: 2.5 })).status).toBe(400);
  });

  it('a stage change takes the new stage\'s probability and is recorded in the history', async () => {
    const o = await (await create({ name: 'Move me', stage: 'Lead', amount: 10 })).json();
    const res = await api.request(`/api/v1/opportunities/${o.id}`, { method: 'PATCH', json: { stage: 'Closed Won' }, headers: { 'X-Actor': 'closer' } });
    expect(await res.json()).toMatchObject({ stage: 'Closed Won', probability: 100 });
    const back = await api.request(`/api/v1/opportunities/${o.id}`, { method: 'PATCH', json: { stage: 'Discovery', probability: 30 } });
    expect(await back.json()).toMatchObject({ stage: 'Discovery', probability: 30 });
    const { data } = await (await api.request(`/api/v1/opportunities/${o.id}/history`)).json();
    expect(data.map((h: { from: string | null; to: string; actor: string }) => [h.from, h.to, h.actor])).toEqual([
      [null, 'Lead', 'api'],
      ['Lead', 'Closed Won', 'closer'],
      ['Closed Won', 'Discovery', 'api'],
    ]);
    const wrong = await api.request(`/api/v1/opportunities/${o.id}`, { method: 'PATCH', json: { stage: 'Nope' } });
    expect(wrong.status).toBe(400);
  });

  it('an unknown account is a 400; an account\'s detail lists its opportunities; filters by account and stage', async () => {
    expect((await create({ name: 'X', account_id: '3f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10' })).status).toBe(400);
    const account = await (await api.request('/api/v1/accounts', { method: 'POST', json: { name: 'Stark Industries', domain: 'Stark.Example', segment: 'Enterprise' } })).json();
    expect(account.domain).toBe('stark.example');
    const o1 = await (await create({ name: 'Suits', account_id: account.id, stage: 'Proposal' })).json();
    const o2 = await (await create({ name: 'Reactors', account_id: account.id })).json();
    const detail = await (await api.request(`/api/v1/accounts/${account.id}`)).json();
    expect(detail.opportunities.map((o: { id: string }) => o.id).sort()).toEqual([o1.id, o2.id].sort());
    const proposals = await (await api.request(`/api/v1/opportunities?account_id=${account.id}&stage=proposal`)).json();
    expect(proposals.data.map((o: { id: string }) => o.id)).toEqual([o1.id]);
    expect((await api.request('/api/v1/accounts', { method: 'POST', json: { name: 'stark industries' } })).status).toBe(409);
    expect((await api.request(`/api/v1/accounts/${account.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await (await api.request(`/api/v1/opportunities/${o1.id}`)).json()).account_id).toBeNull();
  });

  it('opportunities sort by amount and page with a cursor', async () => {
    const amounts = [300, 100, 200, 100];
    for (const [i, amount] of amounts.entries()) await create({ name: `Sorted ${i}`, pipeline_id: pipelineId, amount });
    const got: number[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ pipeline_id: pipelineId, q: 'Sorted', sort: '-amount', limit: '3', ...(cursor ? { cursor } : {}) });
      const page: { data: Array<{ amount: number }>; next_cursor: string | null } = await (await api.request(`/api/v1/opportunities?${qs}`)).json();
      got.push(...page.data.map((o) => o.amount));
      cursor = page.next_cursor;
    } while (cursor);
    expect(got).toEqual([300, 200, 100, 100]);
    for (const o of (await (await api.request(`/api/v1/opportunities?pipeline_id=${pipelineId}&q=Sorted`)).json()).data) {
      await api.request(`/api/v1/opportunities/${o.id}`, { method: 'DELETE' });
    }
  });
});

describe('pipeline summary', () => {
  it('per stage count, value, weighted value (Σ amount × probability / 100), probability and state; totals count open stages only, won and lost apart', async () => {
    const opportunities = [
      { stage: 'Lead', amount: 1000 }, // 10 % → 100
      { stage: 'Lead', amount: 333.33 }, // 10 % → 33.333
      { stage: 'Proposal', amount: 2000, probability: 40 }, // own probability → 800
      { stage: 'Won', amount: 500 }, // 100 % → 500
      { stage: 'Lost', amount: 700 }, // 0 % → 0
    ];
    for (const [i, o] of opportunities.entries()) expect((await create({ name: `Deal ${i}`, pipeline_id: pipelineId, ...o })).status).toBe(201);
    const res = await api.request(`/api/v1/pipelines/${pipelineId}/summary`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      pipeline_id: pipelineId,
      stages: {
        Lead: { count: 2, value: 1333.33, weighted_value: 133.33, probability: 10, state: 'open' },
        Proposal: { count: 1, value: 2000, weighted_value: 800, probability: 50, state: 'open' },
        Won: { count: 1, value: 500, weighted_value: 500, probability: 100, state: 'won' },
        Lost: { count: 1, value: 700, weighted_value: 0, probability: 0, state: 'lost' },
      },
      // Closed deals are not pipeline: neither the won 500 nor the lost 700 counts in the open totals.
      totals: { opportunities: 3, pipeline_value: 3333.33, weighted_value: 933.33, won: { count: 1, value: 500 }, lost: { count: 1, value: 700 } },
    });
  });

  it('an empty pipeline has every stage at zero', async () => {
    const p = await (await api.request('/api/v1/pipelines', { method: 'POST', json: { name: 'Empty', stages: [{ name: 'Only', probability: 20 }] } })).json();
    expect(await (await api.request(`/api/v1/pipelines/${p.id}/summary`)).json()).toEqual({
      pipeline_id: p.id,
      stages: { Only: { count: 0, value: 0, weighted_value: 0, probability: 20, state: 'open' } },
      totals: { opportunities: 0, pipeline_value: 0, weighted_value: 0, won: { count: 0, value: 0 }, lost: { count: 0, value: 0 } },
    });
    expect((await api.request('/api/v1/pipelines/3f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10/summary')).status).toBe(404);
  });
});

describe('API reference', () => {
  it('documents every CRM route, with the API key on service routes and none on the webhooks', async () => {
    const doc = await (await api.request('/api/openapi.json')).json();
    const crmPaths = Object.keys(doc.paths).filter((p) => /^\/api\/v1\/(leads|accounts|opportunities|pipelines|webhooks)/.test(p));
    expect(crmPaths.length).toBeGreaterThanOrEqual(15);
    for (const path of crmPaths) {
      for (const op of Object.values(doc.paths[path]) as Array<{ security: unknown[] }>) {
        expect(op.security.length > 0, path).toBe(!path.startsWith('/api/v1/webhooks'));
      }
    }
    expect(doc.paths['/api/v1/leads/{lead_id}'].patch.responses['409']).toBeDefined();
    expect(doc.paths['/api/v1/webhooks/leads/batch'].post.responses['413']).toBeDefined();
    expect(doc.paths['/api/v1/leads'].get.description).toMatch(/cursor/i);
  });
});
