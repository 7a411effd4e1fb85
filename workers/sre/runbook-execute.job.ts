import type { JobHandler } from '../runner.js';
import { startExecution } from '../../shared/sre/runbooks/runbooks.js';

/** Starts one runbook execution; an execution already started or finished is left alone. */
export const runbookExecute: JobHandler<'sre.runbook-execute'> = (p, job) =>
  startExecution(p.execution_id, { made: job.attemptsMade, max: job.opts.attempts ?? 1 });
