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
    { job: 'sre.incidents-tick', cron: '*/15 * * * * *', slotSeconds: 15, payload: (slot) => ({ slot: slot.toISOString() }) },
    { job: 'sre.runbooks-tick', cron: '*/15 * * * * *', slotSeconds: 15, payload: (slot) => ({ slot: slot.toISOString() }) },
    { job: 'sre.alerts-tick', cron: '*/30 * * * * *', slotSeconds: 30, payload: (slot) => ({ slot: slot.toISOString() }) },

    // --- platform: rows past their retention (a day's slot: one prune per day however many processes tick)
    { job: 'platform.prune', cron: config().retention.pruneCron, slotSeconds: 86_400, payload: (slot) => ({ slot: slot.toISOString() }) },

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
