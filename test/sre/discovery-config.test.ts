// needs: prometheus
import { afterAll, describe, expect, it } from 'vitest';
import { readSource } from '../../shared/sre/discovery/run.js';
import { readScrapeConfig } from '../../shared/sre/discovery/readers.js';
import { metricsEndpoint, startPrometheus, waitForScrapes } from './discovery-servers.js';

// The real Debian prometheus: one job with a target, one configured without any, one with a
// file-based service discovery whose file lists nothing yet and its own interval and path.
const metrics = await metricsEndpoint();
const prometheus = await startPrometheus(
  { app: [`127.0.0.1:${metrics.port}`], pending: [], files: [] },
  { files: { file_sd_configs: [{ files: ['/nonexistent/targets-*.json'] }], scrape_interval: '15s', scrape_timeout: '5s', metrics_path: '/probe', scheme: 'https' } },
);
afterAll(async () => {
  await Promise.all([prometheus.stop(), metrics.close()]);
});

describe('metrics discovery reads job configurations', () => {
  it('a configured job with no target is a scrape_job entity (health unknown), with its configuration', async () => {
    await waitForScrapes(prometheus.url, 2);
    const entities = await readSource({ kind: 'prometheus', address: prometheus.url });
    const jobs = Object.fromEntries(entities.filter((e) => e.type === 'scrape_job').map((e) => [e.name, e]));
    expect(Object.keys(jobs).sort()).toEqual(['app', 'files', 'pending', 'prometheus']);
    expect(jobs.pending).toMatchObject({ health: 'unknown', attributes: { targets: 0, configured: true, discovery: [], static_targets: [], scrape_interval: '1s', metrics_path: '/metrics' } });
    expect(jobs.files).toMatchObject({ health: 'unknown', attributes: { targets: 0, discovery: ['file'], scrape_interval: '15s', scrape_timeout: '5s', metrics_path: '/probe', scheme: 'https' } });
    expect(jobs.app).toMatchObject({ health: 'healthy', attributes: { targets: 1, configured: true, discovery: ['static'], static_targets: [`127.0.0.1:${metrics.port}`] } });
    expect(entities.filter((e) => e.type === 'scrape_target').map((e) => e.attributes.job).sort()).toEqual(['app', 'prometheus']);
  });

  it('reads the YAML with a YAML parser (quoting, anchors, global defaults)', () => {
    const yaml = [
      'global:',
      '  scrape_interval: 30s',
      '  scrape_timeout: 10s',
      'defaults: &tls',
      '  scheme: https',
      'scrape_configs:',
      '- job_name: "blackbox: http"',
      '  <<: *tls',
      '  metrics_path: /probe',
      '  static_configs:',
      '  - targets: [\'a:9115\', "b:9115"]',
      '- job_name: k8s',
      '  kubernetes_sd_configs: [{ role: pod }]',
    ].join('\n');
    expect(readScrapeConfig(yaml)).toEqual([
      { job_name: 'blackbox: http', scrape_interval: '30s', scrape_timeout: '10s', metrics_path: '/probe', scheme: 'https', discovery: ['static'], static_targets: ['a:9115', 'b:9115'] },
      { job_name: 'k8s', scrape_interval: '30s', scrape_timeout: '10s', metrics_path: '/metrics', scheme: 'http', discovery: ['kubernetes'], static_targets: [] },
    ]);
  });
});
