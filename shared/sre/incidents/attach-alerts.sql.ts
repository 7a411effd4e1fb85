/**
 * Operation across the alert and incident aggregates: alerts join an incident (their incident_id)
 * and the incident's timeline records each one, in the caller's transaction.
 */
import type { Knex } from 'knex';
import { addTimeline, TimelineKind } from './incident.store.js';

/** Attaches alerts to an incident with a timeline row each; returns how many were attached. */
export async function attachAlerts(trx: Knex, incidentId: string, alertIds: string[], by: string): Promise<number> {
  if (!alertIds.length) return 0;
  const attached = (await trx('sre_alert_instances')
    .whereIn('id', alertIds)
    .update({ incident_id: incidentId })
    .returning(['id', 'fingerprint', 'alertname'])) as Array<{ id: string; fingerprint: string; alertname: string }>;
  await addTimeline(
    trx,
    attached.map((a) => ({ incident_id: incidentId, kind: TimelineKind.AlertAttached, actor: by, message: a.alertname, data: { alert_id: a.id, fingerprint: a.fingerprint } })),
  );
  return attached.length;
}
