import type { Handler } from '../runner.js';
import { refreshExecutions } from '../../shared/sre/runbooks/runbooks.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Refreshes running executions from the automation API; moves are conditional, so a rerun is harmless. */
export const runbooksTick: Handler<(typeof jobDefinitions)['sre.runbooks-tick']['schema']> = () => refreshExecutions();
