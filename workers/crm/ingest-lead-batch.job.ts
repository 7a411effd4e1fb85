/** crm.ingest-lead-batch: writes a webhook batch; safe to run twice (the delivery id is claimed in the write's transaction). */
import type { Handler } from '../runner.js';
import { ingestLeadBatch } from '../../shared/crm/webhooks.js';
import type { leadBatchJob } from '../../shared/crm/schemas.js';

export const ingestLeadBatchJob: Handler<typeof leadBatchJob> = (payload) => ingestLeadBatch(payload);
