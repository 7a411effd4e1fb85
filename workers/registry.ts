/**
 * Job name → handler, for every job of shared/queues.ts. The type makes a missing handler, or one
 * whose payload differs from its job's schema, a compile error; startWorkers() checks again at
 * start-up and refuses to run, naming the job.
 */
import type { JobName } from '../shared/queues.js';
import type { JobHandler } from './runner.js';
import { ingestLeadBatchJob } from './crm/ingest-lead-batch.job.js';
import { deliverJob } from './stream/deliver.job.js';
import { drainParkedJob } from './stream/drain-parked.job.js';
import { expireJob } from './sessions/expire.job.js';
import { summarizeJob } from './sessions/summarize.job.js';
import { sendPhoneCode } from './portal/phone-code.job.js';
import { answerWebChatTurn } from './channels/webchat.job.js';
import { processChannelInbound, processChatappInbound } from './channels/inbound.job.js';
import { sendChannelMessage, sendChatappMessage } from './channels/send.job.js';
import { delegateJob } from './agent/delegate.job.js';
import { ingestAlerts } from './sre/alerts-ingest.job.js';
import { runDiscovery } from './sre/discovery-run.job.js';
import { alertsTick } from './sre/alerts-tick.job.js';
import { incidentTicket } from './sre/incident-ticket.job.js';
import { incidentTicketSync } from './sre/incident-ticket-sync.job.js';
import { monitorsPropose } from './sre/monitors-propose.job.js';
import { monitorsDeploy } from './sre/monitors-deploy.job.js';
import { pruneJob } from './platform/prune.job.js';
import { incidentEscalationNotify } from './sre/incident-escalation-notify.job.js';
import { incidentsTick } from './sre/incidents-tick.job.js';
import { runbookExecute } from './sre/runbook-execute.job.js';
import { runbooksTick } from './sre/runbooks-tick.job.js';
import { indexDocumentJob } from './portal/index-document.job.js';

export const handlers: { [N in JobName]: JobHandler<N> } = {
  // --- the session stream
  'stream.deliver': deliverJob,
  'stream.drain-parked': drainParkedJob,

  // --- sessions
  'sessions.expire': expireJob,
  'sessions.summarize': summarizeJob,

  // --- channels (every channel's inbound turn and send; web chat's turn)
  'channels.inbound': processChannelInbound,
  'channels.send': sendChannelMessage,
  'chatapp.webchat': answerWebChatTurn,
  // The messaging app's former job names, kept for jobs queued before a deploy.
  'chatapp.inbound': processChatappInbound,
  'chatapp.send': sendChatappMessage,

  // --- agent
  'agent.delegate': delegateJob,

  // --- crm
  'crm.ingest-lead-batch': ingestLeadBatchJob,

  // --- sre
  'sre.alerts-ingest': ingestAlerts,
  'sre.alerts-tick': alertsTick,
  'sre.incident-ticket': incidentTicket,
  'sre.incident-ticket-sync': incidentTicketSync,
  'sre.monitors-propose': monitorsPropose,
  'sre.monitors-deploy': monitorsDeploy,
  'platform.prune': pruneJob,
  'sre.incident-escalation-notify': incidentEscalationNotify,
  'sre.incidents-tick': incidentsTick,
  'sre.runbook-execute': runbookExecute,
  'sre.runbooks-tick': runbooksTick,

  // --- portal
  'portal.index-document': indexDocumentJob,
  'portal.phone-code': sendPhoneCode,

  // --- discovery
  'discovery.run': runDiscovery,
};
