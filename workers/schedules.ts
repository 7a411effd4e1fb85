/** Every scheduled tick of the platform (each only enqueues a job). */
import type { AnySchedule } from './scheduler.js';

export function schedules(): AnySchedule[] {
  return [
    // --- sessions

    // --- sre

    // --- discovery
  ];
}
