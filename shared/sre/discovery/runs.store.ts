/** Query module of sre_discovery_runs and sre_discovery_run_sources: one row per run, one per source in a run. */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';
import { NotFoundError } from '../../errors.js';

const RUNS = 'sre_discovery_runs';
const RUN_SOURCES = 'sre_discovery_run_sources';

export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';

export interface DiscoveryRun {
  id: string;
  trigger: 'schedule' | 'manual';
  slot: Date | null;
  status: RunStatus;
  started_at: Date;
  finished_at: Date | null;
  added: number;
  updated: number;
  unchanged: number;
  stale: number;
  rows_written: number;
  errors: Record<string, string>;
}

export interface SourceOutcome {
  source_id: string;
  status: 'succeeded' | 'failed';
  started_at: Date;
  finished_at: Date;
  seen: number;
  added: number;
  updated: number;
  unchanged: number;
  stale: number;
  error: string | null;
}

const runColumns = ['id', 'trigger', 'slot', 'status', 'started_at', 'finished_at', 'added', 'updated', 'unchanged', 'stale', 'rows_written', 'errors'];

/**
 * Opens a run unless one is running (the partial unique index allows one) or the slot already has one.
 * Returns the run that now covers the request and whether it is new.
 */
export async function openRun(trigger: DiscoveryRun['trigger'], slot: Date | null): Promise<{ run: DiscoveryRun; created: boolean }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const inserted = await db().raw(`insert into ${RUNS} (trigger, slot) values (?, ?) on conflict do nothing returning ${runColumns.join(', ')}`, [trigger, slot]);
    if (inserted.rows[0]) return { run: inserted.rows[0], created: true };
    const existing: DiscoveryRun | undefined = await db()(RUNS)
      .select(runColumns)
      .where({ status: 'running' })
      .modify((q) => (slot ? q.orWhere({ slot }) : q))
      .orderByRaw(`status = 'running' desc`)
      .first();
    // The running run may have finished between the two statements: try again.
    if (existing) return { run: existing, created: false };
  }
  throw new Error('could not open or find a discovery run');
}

/** Fails runs left running longer than `olderThanSeconds` (a worker died mid-run), so new runs can start. */
export async function failAbandonedRuns(olderThanSeconds: number): Promise<number> {
  return db()(RUNS)
    .where({ status: 'running' })
    .andWhereRaw(`started_at < now() - make_interval(secs => ?)`, [olderThanSeconds])
    .update({ status: 'failed', finished_at: db().fn.now(), errors: db().raw(`errors || '{"run": "abandoned: no worker finished it"}'::jsonb`) });
}

/**
 * The running run, if any, read inside `trx` after locking the runs table against inserts and
 * updates until `trx` ends: no run can open (nor end) between this read and the caller's commit.
 */
export async function lockRunningRun(trx: Knex.Transaction): Promise<DiscoveryRun | undefined> {
  // SHARE conflicts with the ROW EXCLUSIVE lock of openRun's insert, not with another SHARE holder.
  await trx.raw(`lock table ${RUNS} in share mode`);
  return (await trx(RUNS).select(runColumns).where({ status: 'running' }).first()) as DiscoveryRun | undefined;
}

export async function getRun(id: string): Promise<DiscoveryRun> {
  const run = (await db()(RUNS).select(runColumns).where({ id }).first()) as DiscoveryRun | undefined;
  if (!run) throw new NotFoundError(`Discovery run ${id} does not exist.`);
  return run;
}

/** Records one source's part of a run (a retried run overwrites its earlier attempt). */
export async function recordSourceOutcome(runId: string, outcome: SourceOutcome): Promise<void> {
  await db()(RUN_SOURCES)
    .insert({ run_id: runId, ...outcome })
    .onConflict(['run_id', 'source_id'])
    .merge();
}

/** Closes a run with its totals. */
export async function finishRun(id: string, totals: Pick<DiscoveryRun, 'status' | 'added' | 'updated' | 'unchanged' | 'stale' | 'rows_written' | 'errors'>): Promise<DiscoveryRun> {
  const [run] = await db()(RUNS)
    .where({ id, status: 'running' })
    .update({ ...totals, errors: JSON.stringify(totals.errors), finished_at: db().fn.now() })
    .returning(runColumns);
  return run ?? getRun(id);
}

export async function listRuns(limit: number): Promise<DiscoveryRun[]> {
  return (await db()(RUNS).select(runColumns).orderBy('started_at', 'desc').limit(limit)) as DiscoveryRun[];
}

/** Per source: its last `perSource` outcomes, newest first (one window query). */
export async function lastOutcomesPerSource(perSource: number): Promise<Array<SourceOutcome & { run_id: string }>> {
  const { rows } = await db().raw(
    `select run_id, source_id, status, started_at, finished_at, seen, added, updated, unchanged, stale, error
       from (select rs.*, row_number() over (partition by source_id order by started_at desc) as n from ${RUN_SOURCES} rs) ranked
      where n <= ?
      order by source_id, started_at desc`,
    [perSource],
  );
  return rows;
}
