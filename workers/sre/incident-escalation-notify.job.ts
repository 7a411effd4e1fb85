import type { Handler } from '../runner.js';
import { notifyEscalation } from '../../shared/sre/incidents/incidents.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Sends one escalation to the notification webhook (at least once). */
export const incidentEscalationNotify: Handler<(typeof jobDefinitions)['sre.incident-escalation-notify']['schema']> = (p) => notifyEscalation(p);
