/**
 * Local stand-ins and the real Prometheus for discovery tests: a Docker Engine API and a Traefik
 * API answering their documented JSON, the Debian `prometheus` binary on a free port, and a
 * write detector over the CMDB tables (row versions by xmin).
 */
import http from 'node:http';
import { eventually } from '../helpers/eventually.js';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { freePort } from '../helpers/ports.js';
import type { ContainerSummary } from '../../shared/clients/docker.js';
import type { TraefikRouter, TraefikService } from '../../shared/clients/traefik.js';

export interface LocalServer {
  url: string;
  port: number;
  requests: string[];
  close: () => Promise<void>;
}

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => unknown): Promise<LocalServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    void Promise.resolve(handler(req, res, new URL(req.url ?? '/', 'http://local'))).catch((err) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));

/** A Docker Engine API answering GET [/v1.xx]/containers/json (all=1) with the current containers. */
export async function dockerApiServer(state: { containers: ContainerSummary[]; delayMs?: number; fail?: boolean }) {
  return serve(async (req, res, url) => {
    if (req.method !== 'GET' || !/^(\/v[\d.]+)?\/containers\/json$/.test(url.pathname)) return json(res, 404, { message: 'page not found' });
    if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
    if (state.fail) return json(res, 500, { message: 'Cannot connect to the Docker daemon' });
    const all = url.searchParams.get('all') === '1' || url.searchParams.get('all') === 'true';
    json(res, 200, all ? state.containers : state.containers.filter((c) => c.State === 'running'));
  });
}

/** A Traefik API answering /api/http/routers and /api/http/services with page/per_page and X-Next-Page. */
export async function traefikApiServer(state: { routers: TraefikRouter[]; services: TraefikService[]; fail?: boolean }) {
  return serve((req, res, url) => {
    const list = url.pathname === '/api/http/routers' ? state.routers : url.pathname === '/api/http/services' ? state.services : null;
    if (!list) return json(res, 404, { message: 'not found' });
    if (state.fail) return json(res, 500, { message: 'internal error' });
    const page = Number(url.searchParams.get('page') ?? 1);
    const perPage = Number(url.searchParams.get('per_page') ?? 100);
    const items = list.slice((page - 1) * perPage, page * perPage);
    // As Traefik does: the next page number, or 1 on the last page.
    json(res, 200, items, { 'X-Next-Page': String(page * perPage < list.length ? page + 1 : 1) });
  });
}

/** An HTTP server exposing Prometheus text metrics (something local for Prometheus to scrape). */
export async function metricsEndpoint(): Promise<LocalServer> {
  return serve((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end('# TYPE demo_up gauge\ndemo_up 1\n'));
}

export interface RealPrometheus {
  url: string;
  rulesDir: string;
  process: ChildProcess;
  /** Ends the process (its files stay). */
  kill: () => Promise<void>;
  /** Ends the process and removes its files. */
  stop: () => Promise<void>;
}

/** The Debian `prometheus` binary on a free port with --web.enable-lifecycle, scraping `jobs` every second, loading RULES_DIR/*.yml. */
export async function startPrometheus(jobs: Record<string, string[]>): Promise<RealPrometheus> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sb-prom-'));
  const rulesDir = path.join(dir, 'rules');
  await mkdir(rulesDir);
  const port = await freePort();
  const configFile = path.join(dir, 'prometheus.yml');
  const scrapeConfigs = Object.entries({ prometheus: [`127.0.0.1:${port}`], ...jobs }).map(([job, targets]) => ({ job_name: job, static_configs: [{ targets }] }));
  await writeFile(
    configFile,
    JSON.stringify({ global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' }, rule_files: [path.join(rulesDir, '*.yml')], scrape_configs: scrapeConfigs }),
  );
  const child = spawn('/usr/bin/prometheus', [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--web.enable-lifecycle',
    '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
    return fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
  }, 20_000, 'Prometheus to be ready');
  const kill = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return {
    url,
    rulesDir,
    process: child,
    kill,
    stop: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until Prometheus has scraped every active target at least once (health no longer "unknown"). */
export async function waitForScrapes(url: string, count: number): Promise<void> {
  await eventually(async () => {
    const body = (await (await fetch(`${url}/api/v1/targets?state=active`)).json()) as { data: { activeTargets: Array<{ health: string }> } };
    const t = body.data.activeTargets;
    return t.length >= count && t.every((x) => x.health !== 'unknown');
  }, 15_000, `Prometheus to scrape ${count} targets`);
}

export const cmdbTables = ['sre_entities', 'sre_relationships', 'sre_recommendations', 'sre_entity_monitors'] as const;

/** Every CMDB row's version (xmin): two snapshots differ exactly when a row was inserted, updated or deleted. */
export async function rowVersions(k: import('knex').Knex): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  for (const table of cmdbTables) {
    const { rows } = await k.raw(`select id, xmin::text as v from ${table}`);
    for (const r of rows as Array<{ id: string; v: string }>) versions.set(`${table}:${r.id}`, r.v);
  }
  return versions;
}

/** Keys added, removed or changed between two snapshots. */
export function changedRows(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k));
}
