import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { containerHealth, hostnamesOf, readProxy, readTargets } from '../../shared/sre/discovery/readers.js';
import { dockerClient, dockerOptions } from '../../shared/clients/docker.js';
import { traefikClient } from '../../shared/clients/traefik.js';
import { traefikApiServer } from './discovery-servers.js';
import { readFileSync } from 'node:fs';

// Captured from a real Prometheus 2.42 (../shared/fixtures/prometheus/api-v1-targets.json).
const targetsFixture = JSON.parse(readFileSync(new URL('./fixtures/prometheus-2.42-api-v1-targets.json', import.meta.url), 'utf8'));

const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((c) => c())));

describe('discovery readers', () => {
  it('container health follows state and the "(healthy)"/"(unhealthy)" status texts', () => {
    expect(containerHealth('running', 'Up 2 hours (healthy)')).toBe('healthy');
    expect(containerHealth('running', 'Up 2 hours (unhealthy)')).toBe('unhealthy');
    expect(containerHealth('running', 'Up 3 seconds (health: starting)')).toBe('unknown');
    expect(containerHealth('running', 'Up 2 hours')).toBe('healthy');
    expect(containerHealth('restarting', 'Restarting (1) 5 seconds ago')).toBe('unhealthy');
    expect(containerHealth('exited', 'Exited (0) 1 minute ago')).toBe('down');
    expect(containerHealth('created', 'Created')).toBe('unknown');
  });

  it('hostnames come from Host(`…`) matchers only', () => {
    expect(hostnamesOf('Host(`a.example.com`) || (Host(`B.example.com`) && PathPrefix(`/x`))')).toEqual(['a.example.com', 'b.example.com']);
    expect(hostnamesOf('Host(`a.example.com`, `c.example.com`)')).toEqual(['a.example.com', 'c.example.com']);
    expect(hostnamesOf('HostRegexp(`{sub:[a-z]+}.example.com`) || HostSNI(`*`)')).toEqual([]);
    expect(hostnamesOf(undefined)).toEqual([]);
  });

  it('targets captured from Prometheus 2.42 become targets and jobs with their health', () => {
    const entities = readTargets(targetsFixture.data.activeTargets as never);
    expect(entities.map((e) => `${e.type}:${e.name}:${e.health}`)).toEqual([
      'scrape_target:127.0.0.1:19100:down',
      'scrape_target:127.0.0.1:19090:healthy',
      'scrape_job:node:down',
      'scrape_job:prometheus:healthy',
    ]);
    expect(entities[0]!.attributes).toMatchObject({ job: 'node', endpoint: '127.0.0.1:19100', last_error: expect.stringMatching(/connection refused/) });
    expect(entities[3]!.attributes).toMatchObject({ scrape_interval: '1s', metrics_path: '/metrics', targets: 1 });
  });

  it("a router's service is qualified with its provider, so it names the service entity", () => {
    const [router] = readProxy([{ name: 'web@docker', provider: 'docker', service: 'web', rule: 'Host(`x.test`)' }], []);
    expect(router!.attributes.service).toBe('web@docker');
  });

  it('the Traefik client follows X-Next-Page through every page', async () => {
    const routers = Array.from({ length: 1203 }, (_, i) => ({ name: `r${i}@file`, provider: 'file', rule: `Host(\`r${i}.test\`)`, service: 's' }));
    const traefik = await traefikApiServer({ routers, services: [] });
    closers.push(traefik.close);
    const got = await traefikClient(traefik.url).routers();
    expect(got.map((r) => r.name)).toEqual(routers.map((r) => r.name));
    expect(traefik.requests).toEqual(['GET /api/http/routers?page=1&per_page=500', 'GET /api/http/routers?page=2&per_page=500', 'GET /api/http/routers?page=3&per_page=500']);
  });

  it('the Docker client reaches the runtime on tcp://host:port or a unix socket path', async () => {
    expect(dockerOptions('tcp://proxy:2375')).toMatchObject({ protocol: 'http', host: 'proxy', port: 2375 });
    expect(dockerOptions('/var/run/docker.sock')).toMatchObject({ socketPath: '/var/run/docker.sock' });
    const socket = path.join(os.tmpdir(), `sb-docker-${process.pid}.sock`);
    const server = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(req.url?.startsWith('/containers/json') ? [{ Id: 'abc', Names: ['/x'], State: 'running', Status: 'Up', Labels: {}, Ports: [], Image: 'i' }] : [])));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    expect((await dockerClient(socket).listContainers()).map((c) => c.Id)).toEqual(['abc']);
  });
});
