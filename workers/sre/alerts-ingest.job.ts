import type { JobHandler } from '../runner.js';
import { ingestPayload } from '../../shared/sre/alerts/ingest.js';

/** One accepted webhook payload → deduplicated alert instances (idempotent per payload id). */
export const ingestAlerts: JobHandler<'sre.alerts-ingest'> = (payload) => ingestPayload(payload);
