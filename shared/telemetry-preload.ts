/**
 * Imported first by each role's entry file (api/main.ts, workers/main.ts, …), which loads the role
 * itself only afterwards (a dynamic import), so no launcher needs a Node flag: starts tracing when
 * OTEL_* settings ask for it (shared/telemetry.ts), else does nothing. A configuration error is left
 * to the role, which reports it in one line.
 */
import { ConfigError } from './config.js';
import { startTelemetry } from './telemetry.js';

try {
  await startTelemetry();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
}
