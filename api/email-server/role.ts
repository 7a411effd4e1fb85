/** Email role: the inbound SMTP listener of the email channel (EMAIL_LISTEN_HOST:EMAIL_LISTEN_PORT). */
import { config, ConfigError } from '../../shared/config.js';
import { closeAtShutdown, handleSignals, onShutdown } from '../../shared/lifecycle.js';
import { logger } from '../../shared/logger.js';
import { emailMissingSettings } from '../../shared/channels/email/email.adapter.js';
import { startEmailListener } from '../../shared/channels/email/listener.js';
import { closeQueues } from '../../shared/queues.js';
import { redisState, startProbeServer } from '../../shared/probes.js';

try {
  const missing = emailMissingSettings();
  if (missing.length) throw new ConfigError(`Invalid configuration:\n${missing.map((k) => `  ${k}: required by the email role`).join('\n')}`);
  handleSignals();
  // The queues close after the listener has finished the messages it is receiving (shared/lifecycle.ts).
  closeAtShutdown('queues', closeQueues);
  const { address, listenHost, healthPort } = config().channels.email;
  // Liveness: the process answers. Readiness: not stopping and Redis (where received mail is queued) answers.
  const probes = await startProbeServer({ name: 'email', port: healthPort, host: listenHost, checks: async () => ({ redis: await redisState() }) });
  const listener = await startEmailListener();
  onShutdown('smtp listener', listener.close);
  logger('email').info({ address, listen: `${listenHost}:${listener.port}`, health: `${listenHost}:${probes.port}` }, 'email channel listening for SMTP');
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
