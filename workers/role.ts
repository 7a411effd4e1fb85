/** Worker role: one BullMQ Worker per queue of the registry (or of WORKER_QUEUES), the scheduler, and this process's /metrics and /healthz. */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { config, ConfigError } from '../shared/config.js';
import { closeDb, db } from '../shared/db/index.js';
import { checkRedisDurability } from '../shared/redis.js';
import { closeQueues, registry } from '../shared/queues.js';
import { handleSignals, onShutdown } from '../shared/lifecycle.js';
import { logger } from '../shared/logger.js';
import { unavailableDependency } from '../shared/outages.js';
import { metricsRegistry, metricsScrapeAllowed } from '../shared/metrics.js';
import { loadToolCatalog } from '../shared/tool-catalog.js';
import { handlers } from './registry.js';
import { startWorkers, workerQueues } from './runner.js';
import { startScheduler } from './scheduler.js';
import { schedules } from './schedules.js';

try {
  const cfg = config();
  handleSignals();
  loadToolCatalog();
  await checkRedisDurability((message) => logger('worker').warn(message));
  onShutdown('postgres', closeDb);
  onShutdown('queues', closeQueues);
  const workers = startWorkers(registry, handlers, workerQueues(Object.keys(registry.queues), cfg.workers.queues));
  // Closing a worker waits for the jobs it is running; nothing new is taken meanwhile.
  onShutdown('workers', () => Promise.all(workers.map((w) => w.close())));
  onShutdown('scheduler', startScheduler(schedules()));
  // Connections made and the pool opened to DATABASE_POOL_MIN before saying so: the first jobs wait for neither.
  // A Postgres slow to answer (a busy host, several roles starting at once) is no reason to exit: jobs connect when they run.
  const pool = Promise.all(Array.from({ length: cfg.db.poolMin }, () => db().raw('select 1'))).then(() => undefined, (err: unknown) => err);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const slow = await pool;
  if (slow !== undefined && unavailableDependency(slow) === undefined) throw slow;
  if (slow !== undefined) logger('worker').warn({ err: (slow as Error).message }, 'Postgres did not answer in time at start; jobs connect as they run');

  const metrics = http.createServer(async (req, res) => {
    // Liveness of this worker process for an orchestrator or the image's HEALTHCHECK: its workers are running.
    if (req.url === '/healthz') {
      const stopped = workers.filter((w) => !w.isRunning()).map((w) => w.name);
      return void res.writeHead(stopped.length ? 503 : 200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: stopped.length ? 'stopping' : 'ok', queues: workers.length, stopped }));
    }
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    if (!metricsScrapeAllowed(req.headers.authorization)) return void res.writeHead(401, { 'WWW-Authenticate': 'Bearer realm="metrics"' }).end();
    res.writeHead(200, { 'Content-Type': metricsRegistry.contentType }).end(await metricsRegistry.metrics());
  });
  metrics.listen(cfg.workers.metricsPort, cfg.workers.metricsHost);
  // A port that cannot be bound stops start-up with its reason, like any other start-up failure.
  await once(metrics, 'listening');
  onShutdown('metrics', () => new Promise((resolve) => metrics.close(resolve)));
  // The port bound, which WORKER_METRICS_PORT=0 leaves to the system: what a scraper (bench:sessions) reads.
  const { port } = metrics.address() as AddressInfo;
  const shown = cfg.workers.metricsHost.includes(':') ? `[${cfg.workers.metricsHost}]` : cfg.workers.metricsHost;
  logger('worker').info({ queues: workers.map((w) => w.name), metrics: `http://${shown}:${port}/metrics`, health: `http://${shown}:${port}/healthz` }, 'workers running');
} catch (err) {
  // What stops start-up is said in one line (a configuration error lists each variable).
  console.error(err instanceof ConfigError ? err.message : `start-up failed: ${(err as Error).message}`);
  process.exit(1);
}
