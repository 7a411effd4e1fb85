/**
 * Retention: rows of the tables that grow with traffic are deleted once older than their
 * RETENTION_* period. One named operation across aggregates, run by the platform.prune job (a daily
 * tick that only enqueues; one job per slot however many processes tick). Deletes go in batches, each
 * its own statement, so none holds locks for long; two prunes at once would only find less to delete.
 */
import { config, type Config } from './config.js';
import { db } from './db/index.js';
import { logger } from './logger.js';
import { prunedRows, pruneLastSuccess } from './metrics.js';

type Period = keyof Omit<Config['retention'], 'pruneCron'>;

/** Each pruned table: the column that dates a row, the setting that keeps it, and which rows may go at all. */
export const retentionTargets: ReadonlyArray<{ table: string; column: string; setting: Period; finishedOnly?: boolean }> = [
  { table: 'sre_alert_payloads', column: 'received_at', setting: 'alertPayloads' },
  { table: 'sre_alert_state_history', column: 'at', setting: 'alertHistory' },
  { table: 'tool_calls', column: 'created_at', setting: 'toolCalls' },
  { table: 'session_events', column: 'created_at', setting: 'sessionEvents' },
  // Per-source results and execution history go with their run or execution (ON DELETE CASCADE).
  { table: 'sre_discovery_runs', column: 'created_at', setting: 'discoveryRuns', finishedOnly: true },
  { table: 'sre_runbook_executions', column: 'created_at', setting: 'runbookExecutions', finishedOnly: true },
  { table: 'crm_webhook_deliveries', column: 'created_at', setting: 'webhookDeliveries' },
  { table: 'agent_turn_steps', column: 'created_at', setting: 'agentSteps' },
];

const batch = 5_000;

/** Deletes every row past its retention; returns the rows deleted per table (tables kept forever are left out). */
export async function pruneExpired(periods: Config['retention'] = config().retention): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const { table, column, setting, finishedOnly } of retentionTargets) {
    const period = periods[setting];
    if (period === 'forever') continue;
    deleted[table] = 0;
    const finished = finishedOnly ? ' and finished_at is not null' : '';
    for (;;) {
      const result = await db().raw(`delete from ?? where ctid = any(array(select ctid from ?? where ?? < now() - ?::interval${finished} limit ${batch}))`, [table, table, column, period]);
      deleted[table] += result.rowCount ?? 0;
      prunedRows.inc({ table }, result.rowCount ?? 0);
      if ((result.rowCount ?? 0) < batch) break;
    }
  }
  pruneLastSuccess.setToCurrentTime();
  logger('retention').info({ deleted }, 'pruned rows past their retention');
  return deleted;
}
