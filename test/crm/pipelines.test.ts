import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

type Stage = { id: string; name: string; position: number; probability: number };
type Pipeline = { id: string; name: string; is_default: boolean; stages: Stage[] };

async function newPipeline(name: string): Promise<Pipeline> {
  const res = await api.request('/api/v1/pipelines', {
    method: 'POST',
    json: { name, stages: [{ name: 'Lead', probability: 10 }, { name: 'Proposal', probability: 50 }, { name: 'Won', probability: 100 }] },
  });
  expect(res.status).toBe(201);
  return res.json();
}
const stageNamed = (p: Pipeline, name: string) => p.stages.find((s) => s.name === name)!;
const order = (p: Pipeline) => p.stages.map((s) => [s.position, s.name]);
const opportunity = async (json: Record<string, unknown>) => (await api.request('/api/v1/opportunities', { method: 'POST', json })).json();

describe('editable pipelines', () => {
  it('a pipeline can be renamed and chosen as the default; the previous default stops being it', async () => {
    const p = await newPipeline('Renewals');
    const renamed = await api.request(`/api/v1/pipelines/${p.id}`, { method: 'PATCH', json: { name: 'Renewals 2027', is_default: true } });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ name: 'Renewals 2027', is_default: true });
    const { data } = await (await api.request('/api/v1/pipelines')).json();
    expect(data.filter((x: Pipeline) => x.is_default).map((x: Pipeline) => x.id)).toEqual([p.id]);
    // New opportunities without a pipeline now land in the chosen default.
    expect((await opportunity({ name: 'In the new default' })).pipeline_id).toBe(p.id);
    const back = data.find((x: Pipeline) => x.name === 'Default');
    await api.request(`/api/v1/pipelines/${back.id}`, { method: 'PATCH', json: { is_default: true } });
    expect((await api.request(`/api/v1/pipelines/${p.id}`, { method: 'PATCH', json: { is_default: false } })).status).toBe(400);
    expect((await api.request(`/api/v1/pipelines/${p.id}`, { method: 'PATCH', json: { name: 'Default' } })).status).toBe(409);
  });

  it('stages are added at a position, renamed and reordered; positions stay 1..n', async () => {
    const p = await newPipeline('Ordering');
    let res = await api.request(`/api/v1/pipelines/${p.id}/stages`, { method: 'POST', json: { name: 'Discovery', probability: 25, position: 2 } });
    expect(res.status).toBe(201);
    let now: Pipeline = await res.json();
    expect(order(now)).toEqual([[1, 'Lead'], [2, 'Discovery'], [3, 'Proposal'], [4, 'Won']]);
    now = await (await api.request(`/api/v1/pipelines/${p.id}/stages`, { method: 'POST', json: { name: 'Lost', probability: 0 } })).json();
    expect(order(now).at(-1)).toEqual([5, 'Lost']);
    res = await api.request(`/api/v1/pipelines/${p.id}/stages/${stageNamed(now, 'Won').id}`, { method: 'PATCH', json: { name: 'Closed Won', position: 1 } });
    now = await res.json();
    expect(order(now)).toEqual([[1, 'Closed Won'], [2, 'Lead'], [3, 'Discovery'], [4, 'Proposal'], [5, 'Lost']]);
    expect((await api.request(`/api/v1/pipelines/${p.id}/stages`, { method: 'POST', json: { name: 'Lead', probability: 5 } })).status).toBe(409);
    const tooFar = await api.request(`/api/v1/pipelines/${p.id}/stages/${stageNamed(now, 'Lead').id}`, { method: 'PATCH', json: { position: 9 } });
    expect(tooFar.status).toBe(400);
    expect((await tooFar.json()).errors).toEqual([{ path: 'body.position', message: 'must be between 1 and 5' }]);
    expect((await api.request(`/api/v1/pipelines/${p.id}/stages/${p.stages[0]!.id}`, { method: 'PATCH', json: { probability: 101 } })).status).toBe(400);
  });

  it('a probability change reaches opportunities on the stage default, not hand-set ones, and is recorded', async () => {
    const p = await newPipeline('Weights');
    const lead = stageNamed(p, 'Lead');
    const onDefault = await opportunity({ name: 'default', pipeline_id: p.id, stage: 'Lead', amount: 100 });
    const handSet = await opportunity({ name: 'hand set', pipeline_id: p.id, stage: 'Lead', probability: 33 });
    const res = await api.request(`/api/v1/pipelines/${p.id}/stages/${lead.id}`, { method: 'PATCH', json: { probability: 20 }, headers: { 'X-Actor': 'ops@example.com' } });
    expect(stageNamed(await res.json(), 'Lead').probability).toBe(20);
    expect((await (await api.request(`/api/v1/opportunities/${onDefault.id}`)).json()).probability).toBe(20);
    expect((await (await api.request(`/api/v1/opportunities/${handSet.id}`)).json()).probability).toBe(33);
    const { data } = await (await api.request(`/api/v1/opportunities/${onDefault.id}/history`)).json();
    expect(data.map((h: { field: string; from: string; to: string; actor: string }) => [h.field, h.from, h.to, h.actor])).toEqual([
      ['stage', null, 'Lead', 'api'],
      ['probability', '10', '20', 'ops@example.com'],
    ]);
    const handHistory = (await (await api.request(`/api/v1/opportunities/${handSet.id}/history`)).json()).data;
    expect(handHistory.map((h: { field: string }) => h.field)).toEqual(['stage']);
    const summary = await (await api.request(`/api/v1/pipelines/${p.id}/summary`)).json();
    expect(summary.stages.Lead).toMatchObject({ count: 2, probability: 20, weighted_value: 20 });
  });

  it('deleting a stage with opportunities needs a target (409 naming the count); they move there', async () => {
    const p = await newPipeline('Pruning');
    const proposal = stageNamed(p, 'Proposal');
    const won = stageNamed(p, 'Won');
    const a = await opportunity({ name: 'a', pipeline_id: p.id, stage: 'Proposal' });
    await opportunity({ name: 'b', pipeline_id: p.id, stage: 'Proposal', probability: 42 });
    const refused = await api.request(`/api/v1/pipelines/${p.id}/stages/${proposal.id}`, { method: 'DELETE' });
    expect(refused.status).toBe(409);
    const problem = await refused.json();
    expect(problem.opportunity_count).toBe(2);
    expect(problem.detail).toContain('2 opportunities');
    const foreign = (await newPipeline('Elsewhere')).stages[0]!.id;
    expect((await api.request(`/api/v1/pipelines/${p.id}/stages/${proposal.id}?move_to=${foreign}`, { method: 'DELETE' })).status).toBe(400);
    const done = await api.request(`/api/v1/pipelines/${p.id}/stages/${proposal.id}?move_to=${won.id}`, { method: 'DELETE', headers: { 'X-Actor': 'pruner' } });
    expect(done.status).toBe(200);
    expect(order(await done.json())).toEqual([[1, 'Lead'], [2, 'Won']]);
    const { data } = await (await api.request(`/api/v1/opportunities?pipeline_id=${p.id}&sort=name`)).json();
    expect(data.map((o: { name: string; stage: string; probability: number }) => [o.name, o.stage, o.probability])).toEqual([['a', 'Won', 100], ['b', 'Won', 42]]);
    const history = (await (await api.request(`/api/v1/opportunities/${a.id}/history`)).json()).data;
    expect(history.at(-1)).toMatchObject({ field: 'stage', from: 'Proposal', to: 'Won', actor: 'pruner' });
    // An empty stage goes without a target; the last one stays.
    expect((await api.request(`/api/v1/pipelines/${p.id}/stages/${stageNamed(p, 'Lead').id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api.request(`/api/v1/pipelines/${p.id}/stages/${won.id}?move_to=${won.id}`, { method: 'DELETE' })).status).toBe(409);
  });
});
