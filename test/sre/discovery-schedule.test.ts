import { afterAll, describe, expect, it } from 'vitest';

process.env.DISCOVERY_ENABLED = 'true';
process.env.DISCOVERY_INTERVAL = '2';

const { startPlatform } = await import('../helpers/platform.js');
const { startScheduler } = await import('../../workers/scheduler.js');
const { schedules } = await import('../../workers/schedules.js');
const { queue } = await import('../../shared/queues.js');
const { db } = await import('../../shared/db/index.js');
const { discoveryCron } = await import('../../shared/sre/discovery/schedule.js');
const { until } = await import('./discovery-fakes.js');

await startPlatform();
const stops: Array<() => void> = [];
afterAll(() => stops.forEach((stop) => stop()));

describe('scheduled discovery', () => {
  it('the tick fires often enough for every interval and no more', () => {
    expect(discoveryCron(300)).toBe('0 * * * * *');
    expect(discoveryCron(2)).toBe('*/2 * * * * *');
    expect(discoveryCron(90)).toBe('*/30 * * * * *');
    expect(discoveryCron(45)).toBe('*/15 * * * * *');
  });

  it('several schedulers alive give exactly one run per interval', async () => {
    const started = Date.now();
    // Three worker processes' schedulers, ticking at once.
    for (let i = 0; i < 3; i++) stops.push(startScheduler(schedules().filter((s) => s.job === 'discovery.run')));
    await new Promise((r) => setTimeout(r, 6500));
    stops.forEach((stop) => stop());
    const elapsedSlots = (Date.now() - started) / 2000;
    await until(async () => (await db()('sre_discovery_runs').where({ status: 'running' }).first()) === undefined, 10_000, 'runs to finish');

    const runs: Array<{ slot: Date; trigger: string; status: string }> = await db()('sre_discovery_runs').orderBy('slot');
    const jobs = (await queue('discovery').getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter((j) => j.name === 'discovery.run');
    expect(runs.length).toBeGreaterThanOrEqual(Math.floor(elapsedSlots) - 1);
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(elapsedSlots) + 1);
    expect(runs.every((r) => r.trigger === 'schedule' && r.status === 'succeeded')).toBe(true);
    // One job per slot (the queue dropped the other schedulers' ticks), one run per job.
    expect(jobs).toHaveLength(runs.length);
    const slots = runs.map((r) => r.slot.getTime());
    expect(new Set(slots).size).toBe(slots.length);
    slots.slice(1).forEach((s, i) => expect(s - slots[i]!).toBe(2000));
  });
});
