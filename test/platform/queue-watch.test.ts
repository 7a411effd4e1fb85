/**
 * The helper that "nothing was queued" checks rest on (test/helpers/queues.ts): a job added before the
 * sentinel is recorded by the time the sentinel is back, and "every queue idle" waits while a job waits.
 */
import { describe, expect, it } from 'vitest';
import { queue, registry } from '../../shared/queues.js';
import { onShutdown } from '../../shared/lifecycle.js';
import { QueueWatch, queuesIdle } from '../helpers/queues.js';

describe('QueueWatch', () => {
  it('sees every job added before its sentinel, on any queue; queuesIdle waits for a waiting job', async () => {
    const watch = await QueueWatch.start();
    onShutdown('queue watch', () => watch.close());
    await watch.sentinel();
    expect(watch.added).toEqual([]);
    // No worker runs in this file: the jobs stay waiting until removed.
    const names = Object.keys(registry.queues);
    const jobs = await Promise.all([names[0]!, names.at(-1)!].map(async (name) => ({ name, job: await queue(name).add('probe', { probe: true }) })));
    await watch.sentinel();
    expect(watch.added.sort()).toEqual(jobs.map(({ name, job }) => `${name}:${job.id}`).sort());
    await expect(queuesIdle(300)).rejects.toThrow(/every queue idle/);
    await Promise.all(jobs.map(({ job }) => job.remove()));
    await queuesIdle(5_000);
  });
});
