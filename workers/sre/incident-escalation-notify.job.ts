import type { JobHandler } from '../runner.js';
import { notifyEscalation } from '../../shared/sre/incidents/incidents.js';

/** Sends one escalation to the notification webhook (at least once). */
export const incidentEscalationNotify: JobHandler<'sre.incident-escalation-notify'> = (p) => notifyEscalation(p);
