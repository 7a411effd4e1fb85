/** agent.delegate: the agent works one delegated task; its answer is published and recorded once, whatever the retries. */
import type { Job } from 'bullmq';
import { runDelegation } from '../../shared/agent/delegation.js';
import type { JobHandler } from '../runner.js';

export const delegateJob: JobHandler<'agent.delegate'> = (payload, job: Job) => runDelegation(payload.run_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
