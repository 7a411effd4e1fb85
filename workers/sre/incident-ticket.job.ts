import type { JobHandler } from '../runner.js';
import { createTicket } from '../../shared/sre/incidents/incidents.js';

/** Creates the incident's issue-tracker issue; an existing link makes a rerun a no-op. */
export const incidentTicket: JobHandler<'sre.incident-ticket'> = (p, job) =>
  createTicket(p.incident_id, { made: job.attemptsMade, max: job.opts.attempts ?? 1, retry: job.attemptsMade > 0 || job.stalledCounter > 0 });
