/** Worker role: one BullMQ Worker per queue of the registry (or of WORKER_QUEUES), the scheduler, and this process's /metrics, /healthz and /readyz. */
import { config, ConfigError } from '../shared/config.js';
import { closeDb, db } from '../shared/db/index.js';
import { checkRedisDurability } from '../shared/redis.js';
import { closeQueues, registry } from '../shared/queues.js';
import { closeAtShutdown, handleSignals, onShutdown } from '../shared/lifecycle.js';
import { logger } from '../shared/logger.js';
import { unavailableDependency } from '../shared/outages.js';
import { metricsRegistry, metricsScrapeAllowed } from '../shared/metrics.js';
import { postgresAnswers, redisState, startProbeServer } from '../shared/probes.js';
import { loadToolCatalog } from '../shared/tool-catalog.js';
import { handlers } from './registry.js';
import { closeWorkers, startWorkers, workerQueues } from './runner.js';
import { startScheduler } from './scheduler.js';
import { schedules } from './schedules.js';

try {
  const cfg = config();
  handleSignals();
  loadToolCatalog();
  await checkRedisDurability((message) => logger('worker').warn(message));
  // Connections close after the workers have finished their jobs (shared/lifecycle.ts).
  closeAtShutdown('postgres', closeDb);
  closeAtShutdown('queues', closeQueues);
  const workers = startWorkers(registry, handlers, workerQueues(Object.keys(registry.queues), cfg.workers.queues));
  // Closing a worker waits for the jobs it is running; nothing new is taken meanwhile.
  onShutdown('workers', () => closeWorkers(workers));
  onShutdown('scheduler', startScheduler(schedules()));
  // Connections made and the pool opened to DATABASE_POOL_MIN before saying so: the first jobs wait for neither.
  // A Postgres slow to answer (a busy host, several roles starting at once) is no reason to exit: jobs connect when they run.
  const pool = Promise.all(Array.from({ length: cfg.db.poolMin }, () => db().raw('select 1'))).then(() => undefined, (err: unknown) => err);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const slow = await pool;
  if (slow !== undefined && unavailableDependency(slow) === undefined) throw slow;
  if (slow !== undefined) logger('worker').warn({ err: (slow as Error).message }, 'Postgres did not answer in time at start; jobs connect as they run');

  // Liveness: the process answers. Readiness: its workers run (none closing), PostgreSQL and Redis answer.
  const { port } = await startProbeServer({
    name: 'worker',
    port: cfg.workers.metricsPort,
    host: cfg.workers.metricsHost,
    checks: async () => {
      const [postgres, redis] = await Promise.all([postgresAnswers(), redisState()]);
      return { workers: workers.every((w) => w.isRunning()) ? 'up' : 'down', postgres, redis };
    },
    other: async (req, res) => {
      if (req.url !== '/metrics') return false;
      if (!metricsScrapeAllowed(req.headers.authorization)) res.writeHead(401, { 'WWW-Authenticate': 'Bearer realm="metrics"' }).end();
      else res.writeHead(200, { 'Content-Type': metricsRegistry.contentType }).end(await metricsRegistry.metrics());
      return true;
    },
  });
  // The port bound, which WORKER_METRICS_PORT=0 leaves to the system: what a scraper (bench:sessions) reads.
  const shown = cfg.workers.metricsHost.includes(':') ? `[${cfg.workers.metricsHost}]` : cfg.workers.metricsHost;
  logger('worker').info({ queues: workers.map((w) => w.name), metrics: `http://${shown}:${port}/metrics`, health: `http://${shown}:${port}/healthz`, ready: `http://${shown}:${port}/readyz` }, 'workers running');
} catch (err) {
  // What stops start-up is said in one line (a configuration error lists each variable).
  console.error(err instanceof ConfigError ? err.message : `start-up failed: ${(err as Error).message}`);
  process.exit(1);
}
