/**
 * Scheduled work: node-cron ticks that only enqueue. Each tick's payload names its time slot, from
 * which the registry (shared/queues.ts) derives the job id, so when many worker processes tick at
 * once BullMQ keeps one job per slot.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { JobName, JobPayload } from '../shared/queues.js';
import { enqueue } from '../shared/queues.js';
import { logger } from '../shared/logger.js';
import { dependencyFailed, unavailableDependency } from '../shared/outages.js';

export interface Schedule<N extends JobName = JobName> {
  job: N;
  /** node-cron expression (seconds field allowed). */
  cron: string;
  /** Width of one slot in seconds: the payload names the slot's start. */
  slotSeconds: number;
  payload: (slotStart: Date) => JobPayload<N>;
  enabled?: boolean;
}

/** A schedule of any job. */
export type AnySchedule = { [N in JobName]: Schedule<N> }[JobName];

/** The start of the slot `at` falls in: equal for every process ticking in the same slot. */
export function slotStart(at: Date, slotSeconds: number): Date {
  return new Date(Math.floor(at.getTime() / 1000 / slotSeconds) * slotSeconds * 1000);
}

/** Enqueues one tick of a schedule; duplicates within a slot are dropped by the registry's job id. */
export async function tick<N extends JobName>(schedule: Schedule<N>, now = new Date()): Promise<void> {
  await enqueue(schedule.job, schedule.payload(slotStart(now, schedule.slotSeconds)));
}

/** Starts every enabled schedule; returns a function that stops them. */
export function startScheduler(schedules: Array<Schedule<JobName>>): () => void {
  const log = logger('scheduler');
  const tasks: ScheduledTask[] = schedules
    .filter((s) => s.enabled !== false)
    .map((s) =>
      cron.schedule(s.cron, () => {
        tick(s).catch((err) => {
          // Redis away: part of the outage (one line for it), not a stack trace per tick.
          const dependency = unavailableDependency(err);
          if (dependency) dependencyFailed(dependency, err);
          else log.error({ err, job: s.job }, 'scheduled enqueue failed');
        });
      }),
    );
  return () => tasks.forEach((t) => t.stop());
}
