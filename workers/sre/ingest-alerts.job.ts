import type { Handler } from '../runner.js';
import { ingestPayload } from '../../shared/sre/alerts/ingest.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** One accepted webhook payload → deduplicated alert instances (idempotent per payload id). */
export const ingestAlerts: Handler<(typeof jobDefinitions)['sre.alerts-ingest']['schema']> = (payload) => ingestPayload(payload);
