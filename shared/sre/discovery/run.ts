/**
 * A discovery run: every enabled source read in parallel, each upserted on its own (a failing
 * source records its error and leaves its entities as they were), then relationships derived and
 * recommendations made for new entities. One run at a time (partial unique index on running runs).
 */
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { dockerClient } from '../../clients/docker.js';
import { prometheusClient } from '../../clients/prometheus.js';
import { traefikClient } from '../../clients/traefik.js';
import { upsertSourceEntities, type UpsertOutcome } from '../cmdb/entities.store.js';
import { deriveRelationships } from '../cmdb/relationships.store.js';
import type { DiscoveredEntity } from '../cmdb/cmdb.schemas.js';
import { recommendForNewEntities } from '../monitors/recommend.js';
import { readContainers, readProxy, readScrapeConfig, readTargets } from './readers.js';
import { listSources, seedConfiguredSources, type DiscoverySource } from './sources.store.js';
import { connectCheckFor, discoveryTargetProblem } from './targets.js';
import { withAddressGuard } from '../../clients/http.js';
import { failAbandonedRuns, finishRun, getRun, openRun, recordSourceOutcome, type DiscoveryRun, type RunStatus } from './runs.store.js';
import { publishSreEvent } from '../events.js';

/** What a source kind reports. */
export async function readSource(source: Pick<DiscoverySource, 'kind' | 'address'>): Promise<DiscoveredEntity[]> {
  switch (source.kind) {
    case 'docker':
      return readContainers(await dockerClient(source.address).listContainers());
    case 'prometheus': {
      const client = prometheusClient(source.address);
      const [targets, configYaml] = await Promise.all([client.activeTargets(), client.configYaml()]);
      return readTargets(targets, readScrapeConfig(configYaml));
    }
    case 'traefik': {
      const client = traefikClient(source.address);
      const [routers, services] = await Promise.all([client.routers(), client.services()]);
      return readProxy(routers, services);
    }
  }
}

/** Seconds after which a run still marked running is taken to be abandoned by a dead worker. */
function abandonAfterSeconds(): number {
  return Math.max(1800, 3 * config().sre.discovery.intervalSeconds);
}

/** Opens a run for a trigger, or finds the one already running (or already done for this slot). */
export async function startRun(trigger: DiscoveryRun['trigger'], slot: Date | null = null): Promise<{ run: DiscoveryRun; created: boolean }> {
  await failAbandonedRuns(abandonAfterSeconds());
  const opened = await openRun(trigger, slot);
  if (opened.created) publishSreEvent('discovery.started', { run_id: opened.run.id, trigger });
  return opened;
}

type SourceResult = { source: DiscoverySource; ok: true; outcome: UpsertOutcome } | { source: DiscoverySource; ok: false; error: string };

async function discoverSource(run: DiscoveryRun, source: DiscoverySource): Promise<SourceResult> {
  const started = new Date();
  try {
    // Checked again at each read: a host name may have come to resolve to an internal address since it was set.
    const refused = await discoveryTargetProblem(source.kind, source.address);
    if (refused) throw new Error(`address not allowed: ${refused}`);
    // …and the connection itself goes only to addresses that pass (no second DNS answer, no redirect inside).
    const check = connectCheckFor(source.address);
    const entities = check ? await withAddressGuard(check, () => readSource(source)) : await readSource(source);
    const read = Date.now();
    const outcome = await upsertSourceEntities(source.id, started, entities);
    logger('discovery').debug({ source: source.name, read_ms: read - started.getTime(), upsert_ms: Date.now() - read }, 'source discovered');
    await recordSourceOutcome(run.id, {
      source_id: source.id, status: 'succeeded', started_at: started, finished_at: new Date(),
      seen: entities.length, added: outcome.added, updated: outcome.updated, unchanged: outcome.unchanged, stale: outcome.stale, error: null,
    });
    return { source, ok: true, outcome };
  } catch (err) {
    const error = (err as Error).message || String(err);
    logger('discovery').warn({ source: source.name, err: error }, 'discovery source failed');
    await recordSourceOutcome(run.id, {
      source_id: source.id, status: 'failed', started_at: started, finished_at: new Date(),
      seen: 0, added: 0, updated: 0, unchanged: 0, stale: 0, error,
    });
    return { source, ok: false, error };
  }
}

/** Executes a running run to its end; a run that is no longer running is returned as it is. */
export async function executeRun(runId: string): Promise<DiscoveryRun> {
  const run = await getRun(runId);
  if (run.status !== 'running') return run;
  try {
    await seedConfiguredSources();
    const sources = await listSources({ enabled: true });
    const results = await Promise.all(sources.map((s) => discoverSource(run, s)));
    const done = results.filter((r) => r.ok);
    const t0 = Date.now();
    const relationships = await deriveRelationships();
    const t1 = Date.now();
    const recommended = await recommendForNewEntities(done.flatMap((r) => r.outcome.inserted));
    logger('discovery').debug({ relationships_ms: t1 - t0, recommendations_ms: Date.now() - t1 }, 'relationships and recommendations');
    const sum = (key: 'added' | 'updated' | 'unchanged' | 'stale') => done.reduce((n, r) => n + r.outcome[key], 0);
    const failed = results.filter((r) => !r.ok);
    const status: RunStatus = failed.length === 0 ? 'succeeded' : done.length === 0 ? 'failed' : 'partial';
    const finished = await finishRun(run.id, {
      status,
      added: sum('added'),
      updated: sum('updated'),
      unchanged: sum('unchanged'),
      stale: sum('stale'),
      rows_written: sum('added') + sum('updated') + sum('stale') + relationships.inserted + relationships.deleted + recommended,
      errors: Object.fromEntries(failed.map((r) => [r.source.name, r.error])),
    });
    publishSreEvent('discovery.finished', { run_id: run.id, status, added: finished.added, updated: finished.updated, unchanged: finished.unchanged, stale: finished.stale, errors: finished.errors });
    logger('discovery').info({ run: run.id, status, added: finished.added, updated: finished.updated, unchanged: finished.unchanged, stale: finished.stale, rows_written: finished.rows_written }, 'discovery run finished');
    return finished;
  } catch (err) {
    // Not a source's fault (e.g. the database): close the run so the next trigger can start one.
    const failed = await finishRun(run.id, { status: 'failed', added: 0, updated: 0, unchanged: 0, stale: 0, rows_written: 0, errors: { run: (err as Error).message } }).catch(() => undefined);
    if (failed) publishSreEvent('discovery.finished', { run_id: run.id, status: 'failed', errors: failed.errors });
    throw err;
  }
}

/** A scheduled tick's run: opens the slot's run and executes it, unless another run covers the slot. */
export async function runScheduledDiscovery(slot: Date): Promise<DiscoveryRun | null> {
  const { run, created } = await startRun('schedule', slot);
  const resumable = run.status === 'running' && run.slot?.getTime() === slot.getTime();
  return created || resumable ? executeRun(run.id) : null;
}
