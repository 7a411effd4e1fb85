/** discovery.run: executes the run a manual trigger opened, or opens and executes a scheduled slot's run. */
import type { JobHandler } from '../runner.js';
import { executeRun, runScheduledDiscovery } from '../../shared/sre/discovery/run.js';

export const runDiscovery: JobHandler<'discovery.run'> = async (payload) => {
  const run = payload.trigger === 'manual' ? await executeRun(payload.run_id) : await runScheduledDiscovery(new Date(payload.slot));
  return run ? { run_id: run.id, status: run.status, rows_written: run.rows_written } : { skipped: 'another run covered this slot' };
};
