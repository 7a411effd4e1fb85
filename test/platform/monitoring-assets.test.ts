/**
 * The platform's own monitoring: the alert rules (deploy/monitoring/switchboard-alerts.yml) pass
 * promtool; the Grafana dashboard file is the one generated from its schema-typed source, and each
 * of its queries parses as PromQL; both name only metrics the platform exports.
 */
// needs: prometheus
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { dashboard, dashboardText } from '../../shared/cli/grafana-dashboard.js';
import { metricsRegistry, registerQueueGauges } from '../../shared/metrics.js';
import '../../api/stream/session-stream.js';
import '../../api/sre/events/events.routes.js';

const root = path.resolve(import.meta.dirname, '../..');
const rulesFile = path.join(root, 'deploy/monitoring/switchboard-alerts.yml');
const promtool = (file: string) => spawnSync(process.env.PROMTOOL_BIN ?? 'promtool', ['check', 'rules', file], { encoding: 'utf8' });
const exprs = (dashboard.panels ?? []).flatMap((p) => ('targets' in p ? (p.targets ?? []) : []).map((t) => (t as { expr: string }).expr));

/** Names of the platform's own series (histograms also as _bucket, _count, _sum). */
async function exported(): Promise<Set<string>> {
  registerQueueGauges(async () => []); // as the web role does (api/app.ts)
  const names = (await metricsRegistry.getMetricsAsJSON()).map((m) => m.name);
  return new Set(names.flatMap((n) => [n, `${n}_bucket`, `${n}_count`, `${n}_sum`]));
}
const switchboardMetrics = (text: string) => [...text.matchAll(/\bswitchboard_[a-z_]+/g)].map((m) => m[0]);

describe('monitoring of the platform itself', () => {
  it('the alert rules pass promtool check rules and cover backlog, failed jobs, webhook auth, discovery and outages', () => {
    const run = promtool(rulesFile);
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const alerts = (parse(readFileSync(rulesFile, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string }> }> }).groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual(expect.arrayContaining(['SwitchboardQueueBacklog', 'SwitchboardJobsFailing', 'SwitchboardWebhookAuthFailures', 'SwitchboardDiscoveryFailing', 'SwitchboardDependencyOutage']));
  });

  it('the dashboard file is generated from the schema-typed source (npm run dashboard)', () => {
    expect(readFileSync(path.join(root, 'deploy/monitoring/switchboard-dashboard.json'), 'utf8')).toBe(dashboardText);
    expect(exprs.length).toBe(15);
  });

  it('every dashboard query is valid PromQL (promtool parses it as a recording rule)', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sb-dash-')), 'queries.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] }));
    const run = promtool(file);
    expect(run.status, run.stderr + run.stdout).toBe(0);
  });

  it('rules and dashboard name only switchboard_ metrics the platform exports', async () => {
    const names = await exported();
    const used = new Set([...switchboardMetrics(readFileSync(rulesFile, 'utf8')), ...exprs.flatMap(switchboardMetrics)]);
    expect([...used].filter((n) => !names.has(n))).toEqual([]);
  });
});
