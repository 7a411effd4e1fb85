import type { Handler } from '../runner.js';
import { createTicket } from '../../shared/sre/incidents/incidents.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Creates the incident's issue-tracker issue; an existing link makes a rerun a no-op. */
export const incidentTicket: Handler<(typeof jobDefinitions)['sre.incident-ticket']['schema']> = (p, job) =>
  createTicket(p.incident_id, { made: job.attemptsMade, max: job.opts.attempts ?? 1, retry: job.attemptsMade > 0 || job.stalledCounter > 0 });
