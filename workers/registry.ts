/**
 * Job name → handler, for every job of shared/queues.ts. The type makes a missing handler a
 * compile error; startWorkers() checks again at start-up and refuses to run, naming the job.
 */
import type { JobName } from '../shared/queues.js';
import type { Handler } from './runner.js';
import { ingestLeadBatchJob } from './crm/ingest-lead-batch.job.js';

export const handlers: Record<JobName, Handler<any>> = {
  // --- sessions

  // --- chatapp

  // --- crm
  'crm.ingest-lead-batch': ingestLeadBatchJob,

  // --- sre

  // --- discovery
};
