import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerApiServer, traefikApiServer } from '../sre/discovery-servers.js';
import { eventually } from '../helpers/eventually.js';

// A configured proxy API that fails with a body of its own, and a local service an API caller would like discovery to read.
const configuredProxy = await traefikApiServer({ routers: [], services: [], fail: true });
const internalService = await dockerApiServer({ containers: [] });
process.env.PROXY_API_URL = configuredProxy.url;
delete process.env.METRICS_URL;
delete process.env.CONTAINER_RUNTIME_HOST;
delete process.env.DISCOVERY_ALLOWED_TARGETS;
process.env.MONITORS_AUTO_APPLY = 'false';

const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
type Platform = Awaited<ReturnType<typeof startPlatform>>;

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});
afterAll(async () => {
  await Promise.all([configuredProxy.close(), internalService.close()]);
});

const create = (kind: string, address: string, name = `s-${Math.random().toString(36).slice(2, 8)}`) =>
  api.request('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name, kind, address } });

describe('discovery addresses set through the API', () => {
  it.each([
    ['docker', '/var/run/docker.sock'],
    ['docker', 'unix:///var/run/docker.sock'],
    ['docker', 'tcp://127.0.0.1:2375'],
    ['prometheus', 'http://localhost:9090'],
    ['prometheus', 'http://10.1.2.3:9090'],
    ['traefik', 'http://169.254.169.254/latest/meta-data'],
    ['traefik', 'http://[::1]:8080'],
    ['traefik', 'http://[::ffff:127.0.0.1]:8080'],
    ['traefik', 'file:///etc/passwd'],
  ])('%s at %s is a 400 naming body.address', async (kind, address) => {
    const res = await create(kind, address);
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual(['body.address']);
  });

  it('a public address is accepted, and a change to an internal one is refused', async () => {
    const res = await create('prometheus', 'http://93.184.216.34:9090');
    expect(res.status).toBe(201);
    const source = await res.json();
    const patch = await api.request(`/api/v1/cmdb/discovery/sources/${source.id}`, { method: 'PATCH', json: { address: internalService.url } });
    expect(patch.status).toBe(400);
    expect((await patch.json()).errors[0].path).toBe('body.address');
    await api.request(`/api/v1/cmdb/discovery/sources/${source.id}`, { method: 'PATCH', json: { enabled: false } });
  });

  it('a source stored earlier with an internal address is not read, and a source error does not carry the upstream body', async () => {
    await db()('sre_discovery_sources').insert({ name: 'legacy-internal', kind: 'docker', address: internalService.url, enabled: true });
    const triggered = await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json();
    const run = await eventually(async () => {
      const r = await (await api.request(`/api/v1/cmdb/discovery/runs/${triggered.run_id}`)).json();
      return r.status !== 'running' && r;
    }, 20_000, 'the discovery run');
    expect(run.errors['legacy-internal']).toMatch(/address not allowed/);
    expect(internalService.requests).toHaveLength(0);
    expect(run.errors.traefik).toMatch(/answered 500/);
    expect(run.errors.traefik).not.toContain('internal error');
  });

  it('classifies addresses', async () => {
    const { isInternalAddress } = await import('../../shared/sre/discovery/targets.js');
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.20.1.1', '192.168.1.1', '169.254.169.254', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '0.0.0.0']) expect(isInternalAddress(ip)).toBe(true);
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) expect(isInternalAddress(ip)).toBe(false);
  });
});
