/** Starting discovery on request, and the discovery status the CMDB API shows. */
import { enqueue } from '../../queues.js';
import { startRun } from './run.js';
import { finishRun, lastOutcomesPerSource, listRuns, type DiscoveryRun } from './runs.store.js';
import { listSources, seedConfiguredSources } from './sources.store.js';

/** Opens a manual run and queues it; during a running run, returns that run instead. */
export async function triggerDiscovery(): Promise<{ run: DiscoveryRun; created: boolean }> {
  const opened = await startRun('manual');
  if (opened.created) {
    try {
      await enqueue('discovery.run', { trigger: 'manual', run_id: opened.run.id });
    } catch (err) {
      // Never leave a run "running" that no worker will execute: it would block every later trigger.
      await finishRun(opened.run.id, { status: 'failed', added: 0, updated: 0, unchanged: 0, stale: 0, rows_written: 0, errors: { run: `could not be queued: ${(err as Error).message}` } });
      throw err;
    }
  }
  return opened;
}

/** Every source with its last outcomes, and the latest runs. */
export async function discoveryStatus(perSource: number, runs: number) {
  await seedConfiguredSources();
  const [sources, outcomes, latest] = await Promise.all([listSources(), lastOutcomesPerSource(perSource), listRuns(runs)]);
  return {
    running: latest.find((r) => r.status === 'running') ?? null,
    sources: sources.map((s) => ({ ...s, last_runs: outcomes.filter((o) => o.source_id === s.id).map(({ source_id: _, ...o }) => o) })),
    runs: latest,
  };
}
