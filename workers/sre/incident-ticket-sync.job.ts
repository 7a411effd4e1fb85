import type { Handler } from '../runner.js';
import { syncTicket } from '../../shared/sre/incidents/incidents.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Closes or reopens the incident's tracker issue and comments on it (a no-op while it has no issue). */
export const incidentTicketSync: Handler<(typeof jobDefinitions)['sre.incident-ticket-sync']['schema']> = (p) => syncTicket(p);
