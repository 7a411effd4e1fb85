/** Every scheduled tick of the platform (each only enqueues a job). */
import type { AnySchedule } from './scheduler.js';
import { config } from '../shared/config.js';
import { discoveryCron } from '../shared/sre/discovery/schedule.js';

export function schedules(): AnySchedule[] {
  return [
    // --- sessions

    // --- sre

    // --- discovery
    {
      job: 'discovery.run',
      cron: discoveryCron(config().sre.discovery.intervalSeconds),
      slotSeconds: config().sre.discovery.intervalSeconds,
      payload: (slot) => ({ trigger: 'schedule', slot: slot.toISOString() }),
      enabled: config().sre.discovery.enabled,
    },
  ];
}
