import type { JobHandler } from '../runner.js';
import { refreshExecutions } from '../../shared/sre/runbooks/runbooks.js';

/** Refreshes running executions from the automation API; moves are conditional, so a rerun is harmless. */
export const runbooksTick: JobHandler<'sre.runbooks-tick'> = () => refreshExecutions();
