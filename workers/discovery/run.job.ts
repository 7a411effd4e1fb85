/** discovery.run: executes the run a manual trigger opened, or opens and executes a scheduled slot's run. */
import type { JobPayload } from '../../shared/queues.js';
import { executeRun, runScheduledDiscovery } from '../../shared/sre/discovery/run.js';

type Payload = JobPayload<'discovery.run'>;

export async function runDiscovery(payload: Payload) {
  const run = payload.trigger === 'manual' ? await executeRun(payload.run_id) : await runScheduledDiscovery(new Date(payload.slot));
  return run ? { run_id: run.id, status: run.status, rows_written: run.rows_written } : { skipped: 'another run covered this slot' };
}
