/** Every scheduled tick of the platform (each only enqueues a job). */
import type { AnySchedule } from './scheduler.js';

export function schedules(): AnySchedule[] {
  return [
    // --- sessions

    // --- sre
    { job: 'sre.incidents-tick', cron: '*/15 * * * * *', slotSeconds: 15, payload: (slot) => ({ slot: slot.toISOString() }) },
    { job: 'sre.runbooks-tick', cron: '*/15 * * * * *', slotSeconds: 15, payload: (slot) => ({ slot: slot.toISOString() }) },
    { job: 'sre.alerts-tick', cron: '*/30 * * * * *', slotSeconds: 30, payload: (slot) => ({ slot: slot.toISOString() }) },

    // --- discovery
  ];
}
