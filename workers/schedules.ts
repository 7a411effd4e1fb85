/** Every scheduled tick of the platform (each only enqueues a job). */
import type { AnySchedule } from './scheduler.js';
import { config } from '../shared/config.js';
import { discoveryCron } from '../shared/sre/discovery/schedule.js';

export function schedules(): AnySchedule[] {
  return [
    // --- sessions
    {
      job: 'sessions.expire',
      cron: config().sessions.expiryCron,
      slotSeconds: 60,
      payload: (slot) => ({ slot: slot.toISOString() }),
      enabled: config().sessions.enabled,
    },

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
