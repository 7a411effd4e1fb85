/**
 * npm run dev's local monitoring: where the Debian packages `prometheus` and
 * `prometheus-alertmanager` are installed (as CI installs them), a Prometheus that scrapes the
 * platform's own /metrics (web and worker roles), loads the rule files deploy-all writes and sends
 * its alerts to a local Alertmanager, which posts them to the platform's Alertmanager webhook. So an
 * alert travels Prometheus → Alertmanager → /webhooks/alertmanager/default → an incident. Where a
 * package is missing, nothing starts and the reason (what to install) is returned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface DevMonitoringOptions {
  /** host:port of the web role's /metrics and of the worker role's. */
  appTargets: string[];
  /** The platform's base URL the Alertmanager posts to. */
  platformUrl: string;
  /** Bearer token /metrics requires (METRICS_TOKEN), if any. */
  metricsToken?: string;
  /** Where deploy-all writes its rule files (RULES_DIR). */
  rulesDir: string;
  /** Configuration and data of both, kept between runs. */
  dataDir: string;
  prometheusPort: number;
  alertmanagerPort: number;
  prometheusBin?: string;
  alertmanagerBin?: string;
  /**
   * Scrape and rule evaluation interval (default 15s), how soon a firing alert is sent again (default
   * 1m: an alert fired while Prometheus is still finding its Alertmanager, after a start or a rule
   * reload, is dropped and goes out on the next send) and Alertmanager's group_wait (default 10s).
   * Tests shorten them.
   */
  intervals?: { scrape: string; resendDelay: string; groupWait: string };
}

export type DevMonitoring =
  | { started: true; prometheusUrl: string; alertmanagerUrl: string; stop: () => Promise<void> }
  | { started: false; missing: string[]; hint: string };

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

/** Waits for `url` to answer 200 while `child` runs; the child's last stderr lines explain a failure. */
async function ready(child: ChildProcess, url: string, name: string, stderr: () => string): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 250) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr().trim().split('\n').pop()}`);
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} did not become ready at ${url}`);
}

function run(bin: string, args: string[]): { child: ChildProcess; stderr: () => string } {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  child.stderr!.on('data', (d) => (text = (text + d).slice(-4000)));
  return { child, stderr: () => text };
}

/** Starts Prometheus and Alertmanager wired to the platform, or says which package to install. */
export async function startDevMonitoring(o: DevMonitoringOptions): Promise<DevMonitoring> {
  const prometheusBin = o.prometheusBin ?? '/usr/bin/prometheus';
  const alertmanagerBin = o.alertmanagerBin ?? '/usr/bin/prometheus-alertmanager';
  const missing = [
    ...(existsSync(prometheusBin) ? [] : ['prometheus']),
    ...(existsSync(alertmanagerBin) ? [] : ['prometheus-alertmanager']),
  ];
  if (missing.length) return { started: false, missing, hint: `apt-get install ${missing.join(' ')}` };

  const dir = path.resolve(o.dataDir);
  const rulesDir = path.resolve(o.rulesDir);
  mkdirSync(path.join(dir, 'prometheus-data'), { recursive: true });
  mkdirSync(path.join(dir, 'alertmanager-data'), { recursive: true });
  mkdirSync(rulesDir, { recursive: true });
  const alertmanagerAddress = `127.0.0.1:${o.alertmanagerPort}`;
  const prometheusConfig = {
    global: { scrape_interval: o.intervals?.scrape ?? '15s', evaluation_interval: o.intervals?.scrape ?? '15s' },
    rule_files: [path.join(rulesDir, '*.yml')],
    alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanagerAddress] }] }] },
    scrape_configs: [
      { job_name: 'prometheus', static_configs: [{ targets: [`127.0.0.1:${o.prometheusPort}`] }] },
      { job_name: 'switchboard', static_configs: [{ targets: o.appTargets }], ...(o.metricsToken ? { authorization: { credentials: o.metricsToken } } : {}) },
    ],
  };
  // JSON is YAML: no YAML library needed to write either file.
  writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(prometheusConfig, null, 2));
  const alertmanagerConfig = {
    // The always-firing Watchdog goes nowhere here (it would hold an incident open for good).
    route: { receiver: 'switchboard', group_by: ['alertname'], group_wait: o.intervals?.groupWait ?? '10s', group_interval: '1m', repeat_interval: '4h', routes: [{ matchers: ['alertname="Watchdog"'], receiver: 'none' }] },
    receivers: [{ name: 'switchboard', webhook_configs: [{ url: `${o.platformUrl}/webhooks/alertmanager/default`, send_resolved: true }] }, { name: 'none' }],
  };
  writeFileSync(path.join(dir, 'alertmanager.yml'), JSON.stringify(alertmanagerConfig, null, 2));

  const am = run(alertmanagerBin, [
    `--config.file=${path.join(dir, 'alertmanager.yml')}`,
    `--storage.path=${path.join(dir, 'alertmanager-data')}`,
    `--web.listen-address=${alertmanagerAddress}`,
    '--cluster.listen-address=',
    '--log.level=warn',
  ]);
  const prom = run(prometheusBin, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'prometheus-data')}`,
    `--web.listen-address=127.0.0.1:${o.prometheusPort}`,
    // deploy-all reloads the rules through /-/reload.
    '--web.enable-lifecycle',
    `--rules.alert.resend-delay=${o.intervals?.resendDelay ?? '1m'}`,
    '--log.level=warn',
  ]);
  const stop = async () => {
    await Promise.all([stopChild(prom.child), stopChild(am.child)]);
  };
  const alertmanagerUrl = `http://${alertmanagerAddress}`;
  const prometheusUrl = `http://127.0.0.1:${o.prometheusPort}`;
  try {
    await ready(am.child, `${alertmanagerUrl}/-/ready`, 'prometheus-alertmanager', am.stderr);
    await ready(prom.child, `${prometheusUrl}/-/ready`, 'prometheus', prom.stderr);
  } catch (err) {
    await stop();
    throw err;
  }
  return { started: true, prometheusUrl, alertmanagerUrl, stop };
}
