/** Web role: the Koa API (REST, webhooks, SSE, docs, queue dashboard, /metrics). */
import { config, ConfigError } from '../shared/config.js';
import { closeDb } from '../shared/db/index.js';
import { closeQueues } from '../shared/queues.js';
import { handleSignals, onShutdown } from '../shared/lifecycle.js';
import { logger } from '../shared/logger.js';
import { startServer } from './server.js';

try {
  const cfg = config();
  handleSignals();
  onShutdown('postgres', closeDb);
  onShutdown('queues', closeQueues);
  const { url } = await startServer(cfg.http.port, cfg.http.host);
  logger('web').info({ url }, 'API listening');
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
