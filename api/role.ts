/** Web role: the Koa API (REST, webhooks, SSE, docs, queue dashboard, /metrics). */
import { config, ConfigError } from '../shared/config.js';
import { boundQueriesForRequests, closeDb } from '../shared/db/index.js';
import { checkRedisDurability } from '../shared/redis.js';
import { closeQueues } from '../shared/queues.js';
import { closeAtShutdown, handleSignals } from '../shared/lifecycle.js';
import { logger } from '../shared/logger.js';
import { loadToolCatalog } from '../shared/tool-catalog.js';
import { startServer } from './server.js';

try {
  const cfg = config();
  handleSignals();
  loadToolCatalog();
  boundQueriesForRequests(cfg.db.apiQueryTimeoutMs);
  await checkRedisDurability((message) => logger('web').warn(message));
  // Connections close after the requests in flight have finished (shared/lifecycle.ts).
  closeAtShutdown('postgres', closeDb);
  closeAtShutdown('queues', closeQueues);
  const { url } = await startServer(cfg.http.port, cfg.http.host);
  logger('web').info({ url }, 'API listening');
} catch (err) {
  // What stops start-up is said in one line (a configuration error lists each variable).
  console.error(err instanceof ConfigError ? err.message : `start-up failed: ${(err as Error).message}`);
  process.exit(1);
}
