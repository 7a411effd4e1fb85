/** Liveness, readiness, the authenticated health check and Prometheus metrics. */
import { ApiRouter } from '../routing.js';
import { pendingMigrations } from '../../shared/db/index.js';
import { isStopping } from '../../shared/lifecycle.js';
import { postgresAnswers, redisState } from '../../shared/probes.js';
import { metricsRegistry, metricsScrapeAllowed } from '../../shared/metrics.js';
import { NotReadyError, UnauthorizedError } from '../../shared/errors.js';
import { health, liveness, metricsText, readiness } from './health.schemas.js';

async function probe() {
  const withTimeout = <T>(p: Promise<T>, ms: number) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
  // Through the process's pool and kept probe connection: no connection of its own per probe.
  const [pg, redis] = await Promise.all([postgresAnswers(2000), redisState(1000)]);
  let pending: string[] | undefined;
  if (pg === 'up') pending = await withTimeout(pendingMigrations(), 2000).catch(() => undefined);
  const migrations = pending === undefined ? ('unknown' as const) : pending.length ? ('pending' as const) : ('current' as const);
  const ready = pg === 'up' && redis === 'up' && migrations === 'current';
  return { status: ready ? ('ready' as const) : ('not_ready' as const), checks: { postgres: pg, redis, migrations }, ...(pending?.length ? { pending_migrations: pending } : {}) };
}

const started = Date.now();

export function healthRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/healthz',
      tags: ['platform'],
      summary: 'Liveness: the process is up',
      description: 'Checks the process only (no dependency), so an outage of PostgreSQL or Redis never gets every replica restarted at once.',
      auth: 'public',
      responses: { 200: { description: 'Up', schema: liveness } },
      handler: () => ({ status: 'ok' as const }),
    })
    .route({
      method: 'get',
      path: '/readyz',
      tags: ['platform'],
      summary: 'Readiness: not stopping, PostgreSQL and Redis reachable, migrations current',
      description: 'Answers 503 problem+json naming each dependency that is down (and the body lists the checks), and from the moment the process received SIGTERM (it keeps serving for SHUTDOWN_DRAIN_DELAY_MS meanwhile, so the load balancer takes it out first).',
      auth: 'public',
      responses: { 200: { description: 'Ready', schema: readiness } },
      errors: { 503: 'A dependency is down or migrations are pending' },
      handler: async () => {
        if (isStopping()) throw new NotReadyError('Not ready: stopping.', []);
        const result = await probe();
        if (result.status === 'ready') return result;
        const down = Object.entries(result.checks).filter(([, v]) => v !== 'up' && v !== 'current').map(([k, v]) => `${k} ${v}`);
        throw new NotReadyError(`Not ready: ${down.join(', ')}.`, [], { checks: result.checks });
      },
    })
    .route({
      method: 'get',
      path: '/api/health',
      tags: ['platform'],
      summary: 'Health check for API clients (the portal calls it with X-API-Key)',
      auth: 'key-or-sre',
      responses: { 200: { description: 'Health', schema: health } },
      handler: async () => ({ ...(await probe()), uptime_seconds: Math.round((Date.now() - started) / 1000), version: process.env.npm_package_version ?? '0.1.0' }),
    })
    .route({
      method: 'get',
      path: '/metrics',
      tags: ['platform'],
      summary: 'Prometheus metrics of this API process',
      description: 'Open when METRICS_TOKEN is unset; otherwise the scrape must send `Authorization: Bearer <METRICS_TOKEN>` (Prometheus `authorization: {credentials: …}`), else 401. Worker roles serve /metrics on WORKER_METRICS_PORT under the same rule.',
      auth: 'public',
      responses: { 200: { description: 'Prometheus text format', schema: metricsText, contentType: 'text/plain; version=0.0.4' } },
      errors: { 401: 'METRICS_TOKEN is set and the bearer token is missing or wrong' },
      handler: async (_input, ctx) => {
        if (!metricsScrapeAllowed(ctx.get('Authorization'))) {
          ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
          throw new UnauthorizedError('/metrics requires Authorization: Bearer <METRICS_TOKEN>.');
        }
        ctx.type = metricsRegistry.contentType;
        return metricsRegistry.metrics();
      },
    });
}
