/** Prometheus metrics of this process (prom-client); each role serves its own registry. */
import client from 'prom-client';
import { config } from './config.js';
import { secretsEqual } from './secrets.js';

/** Whether a scrape may read /metrics: always when METRICS_TOKEN is unset, else only with `Authorization: Bearer <METRICS_TOKEN>`. */
export function metricsScrapeAllowed(authorization: string | undefined): boolean {
  const { token } = config().metrics;
  if (!token) return true;
  const presented = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
  return secretsEqual(presented, token);
}

export const metricsRegistry = new client.Registry();
client.collectDefaultMetrics({ register: metricsRegistry });

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const jobDuration = new client.Histogram({
  name: 'queue_job_duration_seconds',
  help: 'Job processing duration by queue, job name and outcome',
  labelNames: ['queue', 'job', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 15, 60],
  registers: [metricsRegistry],
});

/** Registers a gauge of per-queue job counts, read from Redis at scrape time. */
export function registerQueueGauges(countsOf: () => Promise<Array<{ queue: string; counts: Record<string, number> }>>) {
  new client.Gauge({
    name: 'queue_jobs',
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
