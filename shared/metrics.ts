/** Prometheus metrics of this process (prom-client); each role serves its own registry. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import client from 'prom-client';
import { config } from './config.js';
import { dependencyInOutage } from './outages.js';
import { secretsEqual } from './secrets.js';

/** Whether a scrape may read /metrics: always when METRICS_TOKEN is unset, else only with `Authorization: Bearer <METRICS_TOKEN>`. */
export function metricsScrapeAllowed(authorization: string | undefined): boolean {
  const { token } = config().metrics;
  if (!token) return true;
  const presented = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
  return secretsEqual(presented, token);
}

/** Prefix of the platform's own metrics; Node's process_* and nodejs_* metrics keep their usual names. */
export const metricPrefix = 'switchboard_';

export const metricsRegistry = new client.Registry();
client.collectDefaultMetrics({ register: metricsRegistry });

const here = path.dirname(fileURLToPath(import.meta.url));
/** The running release, from package.json (beside shared/ in source, beside dist/ when compiled), for switchboard_build_info. */
export const buildVersion: string = (
  JSON.parse(readFileSync([path.join(here, '../package.json'), path.join(here, '../../package.json')].find((p) => existsSync(p))!, 'utf8')) as { version: string }
).version;

new client.Gauge({
  name: `${metricPrefix}build_info`,
  help: 'Always 1; its labels name the running release and Node version',
  labelNames: ['version', 'node_version'] as const,
  registers: [metricsRegistry],
}).set({ version: buildVersion, node_version: process.version }, 1);

new client.Gauge({
  name: `${metricPrefix}dependency_outage`,
  help: '1 while this process sees Redis or PostgreSQL unavailable (answering 503), else 0',
  labelNames: ['dependency'] as const,
  registers: [metricsRegistry],
  collect() {
    for (const dependency of ['redis', 'postgres'] as const) this.set({ dependency }, dependencyInOutage(dependency) ? 1 : 0);
  },
});

export const httpDuration = new client.Histogram({
  name: `${metricPrefix}http_request_duration_seconds`,
  help: 'HTTP request duration by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/**
 * The job's name is `job_name`, not `job`: Prometheus sets `job` to the scrape job and would rename
 * ours `exported_job`, so rules grouping or matching on it would see the scrape target instead.
 */
export const jobDuration = new client.Histogram({
  name: `${metricPrefix}queue_job_duration_seconds`,
  help: 'Job processing duration by queue, job name and outcome',
  labelNames: ['queue', 'job_name', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 15, 60],
  registers: [metricsRegistry],
});

/** When the retention prune (platform.prune) last finished, so an alert can tell that it stopped running. */
export const pruneLastSuccess = new client.Gauge({
  name: `${metricPrefix}retention_prune_last_success_timestamp_seconds`,
  help: 'Unix time at which this process last finished the retention prune (rows past their RETENTION_* period deleted)',
  registers: [metricsRegistry],
});

export const prunedRows = new client.Counter({
  name: `${metricPrefix}retention_pruned_rows_total`,
  help: 'Rows deleted by the retention prune, by table',
  labelNames: ['table'] as const,
  registers: [metricsRegistry],
});

/** Registers a gauge of per-queue job counts, read from Redis at scrape time. */
export function registerQueueGauges(countsOf: () => Promise<Array<{ queue: string; counts: Record<string, number> }>>) {
  new client.Gauge({
    name: `${metricPrefix}queue_jobs`,
    help: 'Jobs per queue and state (waiting, active, delayed, failed)',
    labelNames: ['queue', 'state'] as const,
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      for (const { queue, counts } of await countsOf()) {
        for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      }
    },
  });
}
