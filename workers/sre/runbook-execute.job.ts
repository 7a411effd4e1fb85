import type { Handler } from '../runner.js';
import { startExecution } from '../../shared/sre/runbooks/runbooks.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Starts one runbook execution; an execution already started or finished is left alone. */
export const runbookExecute: Handler<(typeof jobDefinitions)['sre.runbook-execute']['schema']> = (p, job) =>
  startExecution(p.execution_id, { made: job.attemptsMade, max: job.opts.attempts ?? 1 });
