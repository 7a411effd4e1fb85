/**
 * The platform's own alerts can fire: `promtool test rules` runs deploy/monitoring/switchboard-alerts.test.yml,
 * which feeds every shipped rule series shaped as Prometheus scrapes them (job and instance set by
 * the scrape) and expects each to fire once; Alertmanager's routing (deploy/monitoring/alertmanager.yml)
 * sends every alert to the operator's receiver as well as the platform, and the Watchdog to the heartbeat only.
 */
// needs: prometheus prometheus-alertmanager
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const monitoring = path.resolve(import.meta.dirname, '../../deploy/monitoring');
const rulesFile = path.join(monitoring, 'switchboard-alerts.yml');
const testsFile = path.join(monitoring, 'switchboard-alerts.test.yml');

interface RuleTests {
  rule_files: string[];
  tests: Array<{ input_series: Array<{ series: string }>; alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}
const rules = (parse(readFileSync(rulesFile, 'utf8')) as { groups: Array<{ rules: Array<{ alert?: string; record?: string }> }> }).groups.flatMap((g) => g.rules);
const ruleTests = parse(readFileSync(testsFile, 'utf8')) as RuleTests;

describe('alert rules of the platform', () => {
  it('promtool test rules passes: every rule fires on scrape-shaped series', () => {
    const run = spawnSync(process.env.PROMTOOL_BIN ?? 'promtool', ['test', 'rules', testsFile], { encoding: 'utf8' });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('SUCCESS');
  });

  it('the tests cover every shipped rule, each firing once and silent before', () => {
    expect(ruleTests.rule_files).toEqual(['switchboard-alerts.yml']);
    expect(rules.filter((r) => !r.alert)).toEqual([]); // a recording rule would need a promql_expr_test here
    const checks = ruleTests.tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules) {
      const own = checks.filter((c) => c.alertname === alert);
      expect(own.filter((c) => c.exp_alerts.length === 1), `${alert} fires once`).toHaveLength(1);
      if (alert !== 'Watchdog') expect(own.some((c) => c.exp_alerts.length === 0), `${alert} is silent before`).toBe(true);
    }
  });

  it('every input series carries the job and instance a scrape gives it', () => {
    const series = ruleTests.tests.flatMap((t) => t.input_series.map((s) => s.series));
    expect(series.length).toBeGreaterThan(10);
    for (const s of series) expect(s).toMatch(/\{job="switchboard-(web|worker)", instance="[^"]+"/);
  });

  it('Alertmanager routes every alert to the operator and the platform, the Watchdog to the heartbeat alone', () => {
    // Debian's amtool predates url_file (compose runs Alertmanager 0.28): the check reads each as a URL.
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-am-'));
    const config = path.join(dir, 'alertmanager.yml');
    writeFileSync(config, readFileSync(path.join(monitoring, 'alertmanager.yml'), 'utf8').replace(/url_file: (\S+)/g, 'url: http://127.0.0.1:9$1'));
    const amtool = (...args: string[]) => spawnSync(process.env.AMTOOL_BIN ?? 'amtool', args, { encoding: 'utf8' });
    const check = amtool('check-config', config);
    expect(check.status, check.stderr + check.stdout).toBe(0);
    const route = (labels: string) => amtool('config', 'routes', 'test', `--config.file=${config}`, labels).stdout.trim();
    expect(route('alertname=SwitchboardDown').split(',').sort()).toEqual(['operator', 'switchboard']);
    expect(route('alertname=SwitchboardJobsFailing')).toMatch(/operator/);
    expect(route('alertname=Watchdog')).toBe('heartbeat');
  });
});
