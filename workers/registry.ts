/**
 * Job name → handler, for every job of shared/queues.ts. The type makes a missing handler a
 * compile error; startWorkers() checks again at start-up and refuses to run, naming the job.
 */
import type { JobName } from '../shared/queues.js';
import type { Handler } from './runner.js';
import { ingestLeadBatchJob } from './crm/ingest-lead-batch.job.js';
import { runDiscovery } from './discovery/run.job.js';
import { deliverJob } from './sessions/deliver.job.js';
import { expireJob } from './sessions/expire.job.js';
import { sendMessage } from './chatapp/send.job.js';
import { processInboundMessage } from './chatapp/inbound.job.js';
import { answerWebChatTurn } from './chatapp/webchat.job.js';

export const handlers: Record<JobName, Handler<any>> = {
  // --- sessions
  'sessions.deliver': deliverJob,
  'sessions.expire': expireJob,

  // --- chatapp
  'chatapp.send': sendMessage,
  'chatapp.inbound': processInboundMessage,
  'chatapp.webchat': answerWebChatTurn,

  // --- crm
  'crm.ingest-lead-batch': ingestLeadBatchJob,

  // --- sre

  // --- discovery
  'discovery.run': runDiscovery,
};
