import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerSummary } from '../../shared/clients/docker.js';
import { dockerApiServer } from './discovery-servers.js';
import { eventually } from '../helpers/eventually.js';

// A Docker Engine API stand-in whose containers the test changes between runs.
const container = (name: string): ContainerSummary => ({
  Id: `${name}-0123456789abcdef`, Names: [`/${name}`], Image: `example/${name}:1`, State: 'running', Status: 'Up 1 minute', Labels: {}, Ports: [], NetworkSettings: { Networks: {} },
});
const docker = { containers: [container('api-1'), container('worker-1')], delayMs: 0, fail: false };
const dockerApi = await dockerApiServer(docker);
// A second runtime added by API (not from configuration), so it can be deleted.
const extra = { containers: [container('edge-1')], delayMs: 0, fail: false };
const extraDocker = await dockerApiServer(extra);
process.env.CONTAINER_RUNTIME_HOST = `tcp://127.0.0.1:${dockerApi.port}`;
process.env.DISCOVERY_ENABLED = 'false';
// The second runtime is local: allowed explicitly, as an API-added source must be.
process.env.DISCOVERY_ALLOWED_TARGETS = `127.0.0.1:${extraDocker.port}`;

const { startPlatform } = await import('../helpers/platform.js');
const api = await startPlatform();
afterAll(async () => {
  await Promise.all([dockerApi.close(), extraDocker.close()]);
});

const getJson = async (path: string) => (await api.request(path)).json();
async function discover() {
  const { run_id } = await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json();
  return eventually(async () => {
    const run = await getJson(`/api/v1/cmdb/discovery/runs/${run_id}`);
    return run.status !== 'running' && run;
  }, 20_000, 'the discovery run');
}
const entityNamed = async (name: string) => (await getJson(`/api/v1/cmdb/entities?q=${name}`)).items.find((e: { name: string }) => e.name === name);

describe('manual CMDB entries', () => {
  it('manual entities and relationships survive discovery runs and are never marked stale', async () => {
    expect((await discover()).status).toBe('succeeded');
    const apiContainer = await entityNamed('api-1');
    const created = await api.request('/api/v1/cmdb/entities', { method: 'POST', json: { type: 'container', name: 'legacy-db', attributes: { host: 'db.internal' }, health: 'healthy' } });
    expect(created.status).toBe(201);
    const legacy = await created.json();
    expect(legacy).toMatchObject({ source: 'manual', source_id: null, origin: 'manual', natural_key: 'legacy-db', stale: false });
    const rel = await api.request('/api/v1/cmdb/relationships', { method: 'POST', json: { from_entity_id: apiContainer.id, to_entity_id: legacy.id, type: 'depends_on' } });
    expect(rel.status).toBe(201);
    const relationship = await rel.json();
    expect(relationship).toMatchObject({ origin: 'manual', type: 'depends_on' });

    // The runtime no longer reports api-1: it goes stale, the manual entity does not; both relationships ends stay.
    docker.containers = [container('worker-1')];
    await discover();
    await discover();
    expect((await entityNamed('api-1')).stale).toBe(true);
    expect(await entityNamed('legacy-db')).toMatchObject({ stale: false, source: 'manual' });
    expect((await api.request(`/api/v1/cmdb/relationships/${relationship.id}`)).status).toBe(200);
    expect((await getJson('/api/v1/cmdb/entities?source=manual')).items.map((e: { id: string }) => e.id)).toEqual([legacy.id]);
    const detail = await getJson(`/api/v1/cmdb/entities/${legacy.id}`);
    expect(detail.relationships).toMatchObject([{ direction: 'incoming', type: 'depends_on', origin: 'manual', entity_name: 'api-1' }]);
  });

  it('manual entities and relationships are edited and deleted; discovered ones are read-only (409)', async () => {
    const legacy = await entityNamed('legacy-db');
    const patched = await api.request(`/api/v1/cmdb/entities/${legacy.id}`, { method: 'PATCH', json: { name: 'legacy-db (primary)', health: 'degraded' } });
    expect(await patched.json()).toMatchObject({ name: 'legacy-db (primary)', health: 'degraded', natural_key: 'legacy-db' });
    const dup = await api.request('/api/v1/cmdb/entities', { method: 'POST', json: { type: 'container', name: 'other', natural_key: 'legacy-db' } });
    expect(dup.status).toBe(409);
    const worker = await entityNamed('worker-1');
    expect((await api.request(`/api/v1/cmdb/entities/${worker.id}`, { method: 'PATCH', json: { name: 'x' } })).status).toBe(409);
    expect((await api.request(`/api/v1/cmdb/entities/${worker.id}`, { method: 'DELETE' })).status).toBe(409);
    const bad = await api.request('/api/v1/cmdb/entities', { method: 'POST', json: { type: 'spaceship', name: '' } });
    expect((await bad.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.name', 'body.type']);
    const rel = await (await api.request('/api/v1/cmdb/relationships', { method: 'POST', json: { from_entity_id: worker.id, to_entity_id: legacy.id, type: 'depends_on' } })).json();
    expect((await api.request('/api/v1/cmdb/relationships', { method: 'POST', json: { from_entity_id: worker.id, to_entity_id: legacy.id, type: 'depends_on' } })).status).toBe(409);
    expect((await api.request('/api/v1/cmdb/relationships', { method: 'POST', json: { from_entity_id: worker.id, to_entity_id: worker.id, type: 'depends_on' } })).status).toBe(400);
    expect(await (await api.request(`/api/v1/cmdb/relationships/${rel.id}`, { method: 'PATCH', json: { type: 'runs_on' } })).json()).toMatchObject({ type: 'runs_on' });
    expect((await api.request(`/api/v1/cmdb/relationships/${rel.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api.request(`/api/v1/cmdb/relationships/${rel.id}`)).status).toBe(404);
    expect((await api.request(`/api/v1/cmdb/entities/${legacy.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await getJson('/api/v1/cmdb/entities?source=manual')).total).toBe(0);
  });

  it('a discovery source can be deleted with its entities; a configured one cannot (409) and says so in the list', async () => {
    const added = await (await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'edge', kind: 'docker', address: `tcp://127.0.0.1:${extraDocker.port}` } })).json();
    expect(added).toMatchObject({ name: 'edge', configured: false });
    expect((await getJson('/api/v1/cmdb/discovery/sources')).items.map((s: { name: string; configured: boolean }) => [s.name, s.configured])).toEqual([['docker', true], ['edge', false]]);
    await discover();
    expect(await entityNamed('edge-1')).toMatchObject({ source: 'edge' });
    expect((await api.request(`/api/v1/cmdb/discovery/sources/${added.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await entityNamed('edge-1')).toBeUndefined();
    expect((await getJson('/api/v1/cmdb/discovery/sources')).items.map((s: { name: string }) => s.name)).toEqual(['docker']);
    const configured = (await getJson('/api/v1/cmdb/discovery/sources')).items[0];
    expect((await api.request(`/api/v1/cmdb/discovery/sources/${configured.id}`, { method: 'DELETE' })).status).toBe(409);
    expect((await api.request(`/api/v1/cmdb/discovery/sources/${added.id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('a source is not deleted while a discovery run is in progress: 409 naming the run, which finishes unharmed', async () => {
    const added = await (await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'edge', kind: 'docker', address: `tcp://127.0.0.1:${extraDocker.port}` } })).json();
    // The source answers slowly, so the run is still reading it when the delete comes.
    extra.delayMs = 1500;
    const { run_id } = await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json();
    const refused = await api.request(`/api/v1/cmdb/discovery/sources/${added.id}`, { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await refused.json();
    expect(problem).toMatchObject({ status: 409, run_id });
    expect(problem.detail).toContain(`Discovery run ${run_id} is in progress`);
    const run = await eventually(async () => {
      const r = await getJson(`/api/v1/cmdb/discovery/runs/${run_id}`);
      return r.status !== 'running' && r;
    }, 20_000, 'the discovery run');
    expect(run).toMatchObject({ status: 'succeeded', errors: {} });
    expect(await entityNamed('edge-1')).toMatchObject({ source: 'edge' });
    expect((await api.request(`/api/v1/cmdb/discovery/sources/${added.id}`, { method: 'DELETE' })).status).toBe(204);

    // A delete and a trigger at the same moment: whichever wins, the run never reads a deleted source.
    const again = await (await api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'edge', kind: 'docker', address: `tcp://127.0.0.1:${extraDocker.port}` } })).json();
    extra.delayMs = 200;
    const [deleted, triggered] = await Promise.all([
      api.request(`/api/v1/cmdb/discovery/sources/${again.id}`, { method: 'DELETE' }),
      api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' }).then((r) => r.json()),
    ]);
    expect([204, 409]).toContain(deleted.status);
    const raced = await eventually(async () => {
      const r = await getJson(`/api/v1/cmdb/discovery/runs/${triggered.run_id}`);
      return r.status !== 'running' && r;
    }, 20_000, 'the raced discovery run');
    expect(raced).toMatchObject({ status: 'succeeded', errors: {} });
    extra.delayMs = 0;
  });
});
