/** The execution aggregate's store: sre_runbook_executions and their status history (sre_runbook_execution_history). */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';
import { NotFoundError } from '../../errors.js';
import { paged, type OffsetPage } from '../listing.js';
import { publishSreEvent } from '../events.js';
import { addTimeline, TimelineKind } from '../incidents/incident.store.js';

export const TABLE = 'sre_runbook_executions';
export const HISTORY = 'sre_runbook_execution_history';
export type ExecutionStatus = 'queued' | 'running' | 'success' | 'failed' | 'timed_out';
export const terminalStatuses: ExecutionStatus[] = ['success', 'failed', 'timed_out'];

interface Row {
  id: string;
  runbook_id: string;
  runbook_name: string;
  alert_id: string | null;
  incident_id: string | null;
  trigger: 'manual' | 'alert';
  triggered_by: string;
  status: ExecutionStatus;
  input: Record<string, unknown>;
  external_execution_id: string | null;
  result: unknown;
  error: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toDomain = (r: Row) => ({
  id: r.id,
  runbook_id: r.runbook_id,
  runbook_name: r.runbook_name,
  alert_id: r.alert_id,
  incident_id: r.incident_id,
  trigger: r.trigger,
  triggered_by: r.triggered_by,
  status: r.status,
  input: r.input,
  external_execution_id: r.external_execution_id,
  result: r.result ?? null,
  error: r.error,
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
export type Execution = ReturnType<typeof toDomain>;

const selectExecutions = (k: Knex) => k(`${TABLE} as e`).join('sre_runbooks as r', 'r.id', 'e.runbook_id').select('e.*', 'r.name as runbook_name');

export interface ExecutionFilter {
  runbook_id?: string;
  status?: ExecutionStatus[];
  trigger?: 'manual' | 'alert';
  alert_id?: string;
  incident_id?: string;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

export async function listExecutions(f: ExecutionFilter): Promise<OffsetPage<Execution>> {
  const q = selectExecutions(db());
  if (f.runbook_id) q.where('e.runbook_id', f.runbook_id);
  if (f.status?.length) q.whereIn('e.status', f.status);
  if (f.trigger) q.where('e.trigger', f.trigger);
  if (f.alert_id) q.where('e.alert_id', f.alert_id);
  if (f.incident_id) q.where('e.incident_id', f.incident_id);
  return paged<Row, Execution>(q, { ...f, orderBy: 'e.created_at desc, e.id', timeColumn: 'e.created_at' }, toDomain);
}

export async function getExecution(id: string, k: Knex = db()): Promise<Execution> {
  const row = (await selectExecutions(k).where('e.id', id).first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No runbook execution ${id}.`);
  return toDomain(row);
}

export async function executionHistory(id: string) {
  const rows = await db()(HISTORY).where({ execution_id: id }).orderBy([{ column: 'at' }, { column: 'id' }]);
  return rows.map((r: { from_status: string | null; to_status: string; detail: string | null; at: Date }) => ({ from: r.from_status, to: r.to_status, detail: r.detail, at: r.at.toISOString() }));
}

/** Inserts a manual execution in status queued, with its first history row. */
export async function insertManualExecution(input: { runbook_id: string; alert_id?: string | null; incident_id?: string | null; triggered_by: string; input: Record<string, unknown> }): Promise<string> {
  return db().transaction(async (trx) => {
    const [row] = await trx(TABLE)
      .insert({ ...input, alert_id: input.alert_id ?? null, incident_id: input.incident_id ?? null, trigger: 'manual', input: JSON.stringify(input.input) })
      .returning('id');
    const id = (row as { id: string }).id;
    await trx(HISTORY).insert({ execution_id: id, from_status: null, to_status: 'queued', detail: `manual: ${input.triggered_by}`, at: trx.raw('clock_timestamp()') });
    return id;
  });
}

/**
 * Moves an execution to a status when it is currently one of `from` (so a concurrent refresh and a
 * retried job cannot both move it); writes the history row. Returns false when it was not in `from`.
 */
export async function moveExecution(
  id: string,
  from: ExecutionStatus[],
  to: ExecutionStatus,
  fields: { external_execution_id?: string | null; result?: unknown; error?: string | null; detail?: string } = {},
): Promise<boolean> {
  const moved = await db().transaction(async (trx) => {
    const current = (await trx(TABLE).where({ id }).forUpdate().first()) as Row | undefined;
    if (!current || !from.includes(current.status)) return null;
    const { detail, result, ...rest } = fields;
    await trx(TABLE)
      .where({ id })
      .update({
        ...rest,
        ...(result !== undefined ? { result: JSON.stringify(result) } : {}),
        status: to,
        ...(to === 'running' && !current.started_at ? { started_at: trx.fn.now() } : {}),
        ...(terminalStatuses.includes(to) ? { finished_at: trx.fn.now() } : {}),
      });
    if (current.status !== to) {
      await trx(HISTORY).insert({ execution_id: id, from_status: current.status, to_status: to, detail: detail ?? null, at: trx.raw('clock_timestamp()') });
      if (current.incident_id && (to === 'running' || terminalStatuses.includes(to))) {
        await addTimeline(trx, [
          {
            incident_id: current.incident_id,
            kind: TimelineKind.RunbookExecution,
            actor: `runbook:${current.runbook_id}`,
            message: `execution ${to}${detail ? `: ${detail}` : ''}`,
            data: { execution_id: id, runbook_id: current.runbook_id, status: to },
          },
        ]);
      }
    }
    return current;
  });
  // Every status change of an execution passes here; its event leaves once the change is committed.
  if (moved && moved.status !== to) publishSreEvent('runbook_execution.changed', { id, runbook_id: moved.runbook_id, from: moved.status, status: to });
  return moved !== null;
}

/** Running executions with an automation execution id, to refresh; and running ones past their runbook's timeout. */
export async function executionsToRefresh(limit = 200) {
  return (await db()(`${TABLE} as e`)
    .join('sre_runbooks as r', 'r.id', 'e.runbook_id')
    .where('e.status', 'running')
    .select('e.id', 'e.external_execution_id', db().raw(`e.started_at < now() - make_interval(secs => r.timeout_seconds) as overdue`))
    .orderBy('e.started_at')
    .limit(limit)) as Array<{ id: string; external_execution_id: string | null; overdue: boolean }>;
}

/** Executions left queued for over `olderThanSeconds` (their job was lost): to enqueue again. */
export async function staleQueuedExecutions(olderThanSeconds: number): Promise<string[]> {
  const rows = await db()(TABLE).where('status', 'queued').where('created_at', '<', db().raw('now() - make_interval(secs => ?)', [olderThanSeconds])).select('id').limit(500);
  return rows.map((r: { id: string }) => r.id);
}

/** What the workflow receives when an execution starts. */
export async function executionContext(id: string) {
  const row = await db()(`${TABLE} as e`)
    .join('sre_runbooks as r', 'r.id', 'e.runbook_id')
    .leftJoin('sre_alert_instances as a', 'a.id', 'e.alert_id')
    .where('e.id', id)
    .select(
      'e.id', 'e.status', 'e.trigger', 'e.triggered_by', 'e.input', 'e.incident_id', 'e.external_execution_id',
      'r.id as runbook_id', 'r.name as runbook_name', 'r.webhook_url', 'r.workflow_id', 'r.parameters',
      'a.id as alert_id', 'a.fingerprint', 'a.status as alert_status', 'a.labels', 'a.annotations',
    )
    .first();
  if (!row) throw new NotFoundError(`No runbook execution ${id}.`);
  return row as {
    id: string; status: ExecutionStatus; trigger: string; triggered_by: string; input: Record<string, unknown>; incident_id: string | null; external_execution_id: string | null;
    runbook_id: string; runbook_name: string; webhook_url: string; workflow_id: string | null; parameters: Record<string, unknown>;
    alert_id: string | null; fingerprint: string | null; alert_status: string | null; labels: Record<string, string> | null; annotations: Record<string, string> | null;
  };
}
