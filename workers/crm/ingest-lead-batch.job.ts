/** crm.ingest-lead-batch: writes a webhook batch; safe to run twice (the delivery id is claimed in the write's transaction). */
import type { JobHandler } from '../runner.js';
import { ingestLeadBatch } from '../../shared/crm/webhooks.js';

export const ingestLeadBatchJob: JobHandler<'crm.ingest-lead-batch'> = (payload) => ingestLeadBatch(payload);
