/**
 * What firing alerts set in motion, once per alert instance and never while it flaps or is silenced
 * (a silenced alert stays pending: if it still fires when the silence ends, the next round takes it): incident rules
 * (open an incident per grouping key or join the open one) and runbooks whose matchers fit (one
 * automatic execution per runbook and instance). Set-based: every pending alert in a few statements.
 */
import { db } from '../../db/index.js';
import { enqueue } from '../../queues.js';
import { issueTracker } from '../../clients/gitlab.js';
import { publishSreEvent } from '../events.js';
import { attachToIncidents, claimPending, openIncidents, queueRunbooks } from './automate-alerts.sql.js';

const batch = 1000;

export interface AutomationResult {
  alerts: number;
  incidents: string[];
  executions: string[];
}

/** Runs incident rules and runbooks for every pending alert; enqueues tickets and executions after commit. */
export async function automateAlerts(): Promise<AutomationResult> {
  const total: AutomationResult = { alerts: 0, incidents: [], executions: [] };
  const trackerStatus = issueTracker() ? 'pending' : 'disabled';
  for (;;) {
    const round = await db().transaction(async (trx) => {
      const pending = await claimPending(trx, batch);
      const matched = pending.filter((p) => p.group_key !== null);
      const incidents = await openIncidents(trx, matched, trackerStatus);
      await attachToIncidents(trx, matched);
      const executions = await queueRunbooks(trx, pending.map((p) => p.id));
      return { alerts: pending.length, incidents, executions };
    });
    if (round.incidents.length) publishSreEvent('incident.opened', { ids: round.incidents });
    if (round.executions.length) publishSreEvent('runbook_execution.changed', { ids: round.executions, status: 'queued' });
    if (trackerStatus === 'pending') for (const id of round.incidents) await enqueue('sre.incident-ticket', { incident_id: id });
    for (const id of round.executions) await enqueue('sre.runbook-execute', { execution_id: id });
    total.alerts += round.alerts;
    total.incidents.push(...round.incidents);
    total.executions.push(...round.executions);
    if (round.alerts < batch) return total;
  }
}
