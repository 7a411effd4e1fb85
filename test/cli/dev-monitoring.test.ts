/**
 * npm run dev's local monitoring with the real Debian prometheus and prometheus-alertmanager: the
 * Prometheus scrapes the platform's /metrics, evaluates the rule files deploy-all writes, and an
 * alert it fires travels through the Alertmanager to the platform's webhook. Without the packages
 * nothing starts and the answer names what to install.
 */
// needs: prometheus prometheus-alertmanager
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../helpers/platform.js';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/eventually.js';
import { db } from '../../shared/db/index.js';
import { startDevMonitoring } from '../../shared/cli/dev-monitoring.js';

const app = await startPlatform();
const dir = await mkdtemp(path.join(os.tmpdir(), 'sb-devmon-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('local monitoring of npm run dev', () => {
  it('scrapes the platform, loads rule files, and an alert reaches the platform through Alertmanager', async () => {
    const monitoring = await startDevMonitoring({
      appTargets: [new URL(app.url).host],
      platformUrl: app.url,
      rulesDir: path.join(dir, 'rules'),
      dataDir: path.join(dir, 'data'),
      prometheusPort: await freePort(),
      alertmanagerPort: await freePort(),
      intervals: { scrape: '1s', resendDelay: '1s', groupWait: '1s' },
    });
    if (!monitoring.started) throw new Error(`not started: ${monitoring.hint}`);
    try {
      const target = await eventually(async () => {
        const body = (await (await fetch(`${monitoring.prometheusUrl}/api/v1/targets?state=active`)).json()) as { data: { activeTargets: Array<{ labels: { job: string }; health: string }> } };
        return body.data.activeTargets.find((t) => t.labels.job === 'switchboard' && t.health === 'up');
      }, 20_000);
      expect(target.health).toBe('up');

      // As deploy-all does: a rule file in RULES_DIR, then a reload.
      await writeFile(path.join(dir, 'rules', 'dev-test.yml'), JSON.stringify({ groups: [{ name: 'dev-test', rules: [{ alert: 'DevMonitoringWorks', expr: 'vector(1)', labels: { severity: 'info' }, annotations: { summary: 'from the local Prometheus' } }] }] }));
      expect((await fetch(`${monitoring.prometheusUrl}/-/reload`, { method: 'POST' })).status).toBe(200);
      const alert = await eventually(async () => (await db()('sre_alert_instances').where({ alertname: 'DevMonitoringWorks' }).first()) as { status: string } | undefined, 40_000);
      expect(alert.status).toBe('firing');
    } finally {
      await monitoring.stop();
    }
  }, 90_000);

  it('without the packages nothing starts and the answer says what to install', async () => {
    const result = await startDevMonitoring({
      appTargets: ['127.0.0.1:1'], platformUrl: app.url, rulesDir: path.join(dir, 'r2'), dataDir: path.join(dir, 'd2'), prometheusPort: 1, alertmanagerPort: 1,
      prometheusBin: path.join(dir, 'no-prometheus'), alertmanagerBin: path.join(dir, 'no-alertmanager'),
    });
    expect(result).toEqual({ started: false, missing: ['prometheus', 'prometheus-alertmanager'], hint: 'apt-get install prometheus prometheus-alertmanager' });
  });
});
