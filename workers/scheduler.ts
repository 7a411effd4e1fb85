/**
 * Scheduled work: node-cron ticks that only enqueue. Each tick's job id is derived from the tick's
 * time slot, so when many worker processes tick at once BullMQ keeps one job per slot.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { JobName, JobPayload } from '../shared/queues.js';
import { enqueue } from '../shared/queues.js';
import { logger } from '../shared/logger.js';

export interface Schedule<N extends JobName = JobName> {
  job: N;
  /** node-cron expression (seconds field allowed). */
  cron: string;
  /** Width of one slot in seconds: the tick's job id is `<job>-<slot start>`. */
  slotSeconds: number;
  payload: (slotStart: Date) => JobPayload<N>;
  enabled?: boolean;
}

/** A schedule of any job. */
export type AnySchedule = { [N in JobName]: Schedule<N> }[JobName];

/** The job id of a tick: equal for every process ticking in the same slot. */
export function slotJobId(job: string, at: Date, slotSeconds: number): string {
  const slot = Math.floor(at.getTime() / 1000 / slotSeconds) * slotSeconds;
  return `${job.replace(/[^\w.-]/g, '_')}-${slot}`;
}

/** Enqueues one tick of a schedule; duplicates within a slot are dropped by BullMQ's job id. */
export async function tick<N extends JobName>(schedule: Schedule<N>, now = new Date()): Promise<void> {
  const slotStart = new Date(Math.floor(now.getTime() / 1000 / schedule.slotSeconds) * schedule.slotSeconds * 1000);
  await enqueue(schedule.job, schedule.payload(slotStart), { jobId: slotJobId(schedule.job, now, schedule.slotSeconds) });
}

/** Starts every enabled schedule; returns a function that stops them. */
export function startScheduler(schedules: Array<Schedule<JobName>>): () => void {
  const log = logger('scheduler');
  const tasks: ScheduledTask[] = schedules
    .filter((s) => s.enabled !== false)
    .map((s) =>
      cron.schedule(s.cron, () => {
        tick(s).catch((err) => log.error({ err, job: s.job }, 'scheduled enqueue failed'));
      }),
    );
  return () => tasks.forEach((t) => t.stop());
}
