/**
 * Loaded before a role's own modules (`node --import ./dist/shared/telemetry-preload.js`, as
 * deploy/entrypoint.sh and the Procfile start each role): starts tracing when OTEL_* settings ask
 * for it (shared/telemetry.ts), else does nothing. A configuration error is left to the role, which
 * reports it in one line.
 */
import { ConfigError } from './config.js';
import { startTelemetry } from './telemetry.js';

try {
  await startTelemetry();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
}
