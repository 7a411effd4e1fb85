/**
 * Monitoring-rule deploys when web and worker processes run on different hosts: the API process
 * (with the workers of every other queue) has a RULES_DIR of its own that Prometheus never reads; a
 * separate worker process runs only the rules queue, with the RULES_DIR that Prometheus reads. The
 * two share nothing but that place (and PostgreSQL and Redis): deploy-all still lands in Prometheus,
 * with the platform's own alert rules beside the monitors.
 */
// needs: prometheus
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus, waitForScrapes } from './discovery-servers.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';

const root = path.resolve(import.meta.dirname, '../..');
const prometheus = await startPrometheus({ node: [`127.0.0.1:${await freePort()}`] });
const webRulesDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'sb-web-host-')), 'rules');
process.env.METRICS_URL = prometheus.url;
process.env.RULES_DIR = webRulesDir;
process.env.DISCOVERY_ENABLED = 'false';
process.env.MONITORS_AUTO_APPLY = 'true';
process.env.MONITORS_MODEL_AUTO = 'false';
process.env.MONITORS_DEPLOY_WAIT_MS = '20000';

const { startPlatform, testApiKey } = await import('../helpers/platform.js');
process.env.API_KEYS = testApiKey;
const { startWorkers } = await import('../../workers/runner.js');
const { handlers } = await import('../../workers/registry.js');
const { registry } = await import('../../shared/queues.js');
const { onShutdown } = await import('../../shared/lifecycle.js');
// This process: the API and every queue's workers but the rules queue's.
const others = startWorkers(registry, handlers, Object.keys(registry.queues).filter((q) => q !== 'rules'));
onShutdown('workers', () => Promise.all(others.map((w) => w.close())));
const api = await startPlatform({ workers: false });
const post = (p: string) => api.request(p, { method: 'POST' });

/** The rules pool on "another host": a worker process of the rules queue only, with Prometheus's RULES_DIR. */
function startRulesWorker(): Promise<ChildProcess> {
  const worker = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'workers/main.ts')], {
    cwd: root,
    env: { ...process.env, RULES_DIR: prometheus.rulesDir, WORKER_QUEUES: 'rules', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: worker.stdout! }).on('line', (l) => l.includes('workers running') && resolve(worker));
    worker.once('exit', (code) => reject(new Error(`rules worker exited (${code}) before it ran`)));
  });
}

let rulesWorker: ChildProcess | undefined;
afterAll(async () => {
  const { stopChildren } = await import('../../shared/cli/roles.js');
  if (rulesWorker) await stopChildren([rulesWorker]);
  await prometheus.stop();
});

beforeAll(async () => {
  await waitForScrapes(prometheus.url, 2);
  const { run_id } = (await (await post('/api/v1/cmdb/discovery/trigger')).json()) as { run_id: string };
  const run = await eventually(async () => {
    const r = (await (await api.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()) as { status: string };
    return r.status === 'running' || r.status === 'queued' ? undefined : r;
  }, 20_000, 'discovery');
  expect(run, JSON.stringify(run)).toMatchObject({ status: 'succeeded' });
}, 60_000);

describe('monitor deploys across hosts', () => {
  it('without a worker of the rules queue, deploy-all answers 503 naming it, and nothing is written anywhere', async () => {
    const { config } = await import('../../shared/config.js');
    const res = await (async () => {
      const { requestMonitorDeploy } = await import('../../shared/sre/monitors/deploy-request.js');
      return requestMonitorDeploy(1500).then(() => 'deployed', (err: Error) => err.message);
    })();
    expect(res).toMatch(/No worker of the rules queue deployed the monitors within 1\.5 s/);
    expect(config().sre.monitors.rulesDir).toBe(webRulesDir);
    expect(existsSync(webRulesDir)).toBe(false);
    expect(existsSync(path.join(prometheus.rulesDir, 'switchboard-monitors.yml'))).toBe(false);
  });

  it('the rules pool writes the file Prometheus reads; the web process\'s own RULES_DIR stays untouched', async () => {
    rulesWorker = await startRulesWorker();
    const res = await post('/api/v1/cmdb/monitors/deploy-all');
    const body = (await res.json()) as { deployed: number; total: number; rule_file: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.deployed).toBeGreaterThan(0);
    expect(body.rule_file).toBe(path.join(prometheus.rulesDir, 'switchboard-monitors.yml'));
    expect(await readFile(body.rule_file, 'utf8')).toContain('sre_monitor_id');
    expect(existsSync(webRulesDir)).toBe(false);
    const rules = await eventually(async () => {
      const groups = ((await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; rules: unknown[] }> } }).data.groups;
      return groups.find((g) => g.name === 'switchboard-monitors')?.rules;
    }, 10_000, 'the deployed group in Prometheus');
    expect(rules).toHaveLength(body.total);
    // The platform's own alert rules came with the deploy (MONITORS_PLATFORM_RULES, on by default).
    const platform = await eventually(async () => {
      const groups = ((await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; file: string; rules: Array<{ name: string }> }> } }).data.groups;
      return groups.find((g) => g.name === 'switchboard-platform');
    }, 10_000, 'the platform rules in Prometheus');
    expect(path.dirname(platform.file)).toBe(prometheus.rulesDir);
    expect(platform.rules.map((r) => r.name)).toEqual(expect.arrayContaining(['SwitchboardQueueBacklog', 'SwitchboardDependencyOutage']));
  }, 60_000);
});
