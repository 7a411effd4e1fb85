// needs: prometheus-alertmanager
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { alertFingerprint } from '../../shared/sre/alerts/fingerprint.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';

// The real Alertmanager (Debian package prometheus-alertmanager), its webhook receiver pointing at the API.
process.env.ALERT_WEBHOOK_TOKEN = 'e2e-token';

let api: Platform;
let am: ChildProcess;
let amUrl: string;
let dir: string;

beforeAll(async () => {
  api = await startPlatform();
  dir = mkdtempSync(path.join(os.tmpdir(), 'am-e2e-'));
  const config = `
global:
  resolve_timeout: 5m
route:
  receiver: switchboard
  group_by: ['alertname']
  group_wait: 200ms
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: switchboard
    webhook_configs:
      - url: ${api.url}/webhooks/alertmanager/default
        send_resolved: true
        http_config:
          authorization:
            credentials: e2e-token
`;
  writeFileSync(path.join(dir, 'alertmanager.yml'), config);
  const port = await freePort();
  amUrl = `http://127.0.0.1:${port}`;
  am = spawn('/usr/bin/prometheus-alertmanager', [
    `--config.file=${path.join(dir, 'alertmanager.yml')}`,
    `--storage.path=${dir}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--cluster.listen-address=',
    '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  am.stderr!.on('data', (c) => (stderr += c));
  await eventually(async () => {
    if (am.exitCode !== null) throw new Error(`alertmanager exited: ${stderr}`);
    return fetch(`${amUrl}/-/ready`).then((r) => r.ok, () => false);
  }, 15_000);
});

afterAll(async () => {
  if (am && am.exitCode === null) {
    const exited = new Promise((r) => am.once('exit', r));
    am.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const postToAlertmanager = async (alerts: unknown[]) => {
  const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(alerts) });
  expect(res.status).toBe(200);
};

describe('with a real Alertmanager', () => {
  it('alerts posted to it arrive deduplicated by its fingerprints, and later resolved', async () => {
    const a = { labels: { alertname: 'E2EDiskFull', instance: 'db-1:9100', severity: 'warning' }, annotations: { summary: 'disk 95%' } };
    const b = { labels: { alertname: 'E2EDiskFull', instance: 'db-2:9100', severity: 'warning' }, annotations: { summary: 'disk 97%' } };
    await postToAlertmanager([a, b]);
    await postToAlertmanager([a]);
    await postToAlertmanager([a, b]);

    const firing = await eventually(async () => {
      const p = await (await api.request('/api/v1/alerts?label=alertname=E2EDiskFull&status=firing')).json();
      return p.total === 2 ? p : null;
    }, 15_000);
    // Alertmanager's own fingerprints arrive as sent, and equal ours over the labels.
    const amAlerts = (await (await fetch(`${amUrl}/api/v2/alerts`)).json()) as Array<{ fingerprint: string; labels: Record<string, string> }>;
    const theirs = amAlerts.filter((x) => x.labels.alertname === 'E2EDiskFull').map((x) => x.fingerprint).sort();
    expect(firing.items.map((x: any) => x.fingerprint).sort()).toEqual(theirs);
    expect(theirs).toEqual([alertFingerprint(a.labels), alertFingerprint(b.labels)].sort());
    expect(firing.items.every((x: any) => x.source.name === 'default' && x.annotations.summary.startsWith('disk'))).toBe(true);

    // endsAt in the past: Alertmanager sends them as resolved at the next group interval.
    const past = new Date(Date.now() - 1000).toISOString();
    await postToAlertmanager([{ ...a, endsAt: past }, { ...b, endsAt: past }]);
    const resolved = await eventually(async () => {
      const p = await (await api.request('/api/v1/alerts?label=alertname=E2EDiskFull')).json();
      return p.total === 2 && p.items.every((x: any) => x.status === 'resolved') ? p : null;
    }, 15_000);
    expect(resolved.items.every((x: any) => x.resolved_by === 'sender:alertmanager/default' && x.ends_at)).toBe(true);
    const history = await (await api.request(`/api/v1/alerts/${resolved.items[0].id}/history`)).json();
    expect(history.items.map((h: any) => `${h.from}->${h.to}`)).toEqual(['null->firing', 'firing->resolved']);
  });
});
