/** Email role: the inbound SMTP listener of the email channel (EMAIL_LISTEN_HOST:EMAIL_LISTEN_PORT). */
import { config, ConfigError } from '../../shared/config.js';
import { handleSignals, onShutdown } from '../../shared/lifecycle.js';
import { logger } from '../../shared/logger.js';
import { emailMissingSettings } from '../../shared/channels/email/email.adapter.js';
import { startEmailListener } from '../../shared/channels/email/listener.js';
import { closeQueues } from '../../shared/queues.js';

try {
  const missing = emailMissingSettings();
  if (missing.length) throw new ConfigError(`Invalid configuration:\n${missing.map((k) => `  ${k}: required by the email role`).join('\n')}`);
  handleSignals();
  const listener = await startEmailListener();
  onShutdown('smtp listener', listener.close);
  onShutdown('queues', closeQueues);
  const { address, listenHost } = config().channels.email;
  logger('email').info({ address, listen: `${listenHost}:${listener.port}` }, 'email channel listening for SMTP');
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
