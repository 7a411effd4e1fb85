import type { Handler } from '../runner.js';
import { incidentsTick as tick } from '../../shared/sre/incidents/incidents.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Escalates overdue incidents and re-queues missing tracker issues; escalation marks make a rerun a no-op. */
export const incidentsTick: Handler<(typeof jobDefinitions)['sre.incidents-tick']['schema']> = (p) => tick(p.slot);
