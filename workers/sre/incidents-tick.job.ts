import type { JobHandler } from '../runner.js';
import { incidentsTick as tick } from '../../shared/sre/incidents/incidents.js';

/** Escalates overdue incidents and re-queues missing tracker issues; escalation marks make a rerun a no-op. */
export const incidentsTick: JobHandler<'sre.incidents-tick'> = (p) => tick(p.slot);
