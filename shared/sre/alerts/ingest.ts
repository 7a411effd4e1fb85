/** Alert ingestion: the webhook side (authenticate, validate, enqueue) and the worker side (dedup write, flapping, automation). */
import { randomUUID } from 'node:crypto';
import { config } from '../../config.js';
import { db } from '../../db/index.js';
import { enqueue, type JobPayload } from '../../queues.js';
import { automateAlerts, type AutomationResult } from '../automation/automation.js';
import type { AuthenticatedSource } from './alert-source.store.js';
import { evaluateFlapping, settleFlapping, writePayload, type IngestResult } from './alert.store.js';
import { normalizeAlerts, type AlertmanagerPayload, type GrafanaPayload } from './payloads.js';
import { publishSreEvent } from '../events.js';

export interface Accepted {
  payload_id: string;
  source: string;
  accepted: number;
}

/** Enqueues the payload's alerts for an authenticated source (authenticateSource); nothing is written before the worker runs. */
export async function acceptWebhook(source: AuthenticatedSource, payload: AlertmanagerPayload | GrafanaPayload): Promise<Accepted> {
  const alerts = normalizeAlerts(payload);
  const payloadId = randomUUID();
  await enqueue('sre.alerts-ingest', { payload_id: payloadId, source_id: source.id, source: source.label, received_at: new Date().toISOString(), alerts });
  return { payload_id: payloadId, source: source.label, accepted: alerts.length };
}

/** Writes one accepted payload (idempotent per payload id), re-evaluates flapping, then runs incident rules and runbooks. */
export async function ingestPayload(job: JobPayload<'sre.alerts-ingest'>): Promise<IngestResult & { automation?: AutomationResult }> {
  const { flapThreshold, flapWindowSeconds } = config().sre;
  const result = await db().transaction(async (trx) => {
    const written = await writePayload(trx, { payloadId: job.payload_id, sourceId: job.source_id, actor: `sender:${job.source}`, receivedAt: job.received_at, alerts: job.alerts });
    await evaluateFlapping(trx, job.source_id, written.changed, flapThreshold, flapWindowSeconds);
    return written;
  });
  if (result.fresh && result.changed.length) {
    publishSreEvent(result.opened > 0 ? 'alert.fired' : 'alert.changed', {
      source: job.source,
      opened: result.opened,
      updated: result.updated,
      resolved: result.resolved,
      fingerprints: result.changed.slice(0, 100),
    });
  }
  // A retried job (not fresh) may have died between commit and automation: run it again (it is idempotent).
  if (result.opened > 0 || !result.fresh) return { ...result, automation: await automateAlerts() };
  return result;
}

/**
 * Clears flapping of alerts stable for the window, then automates every eligible alert: the ones that
 * just settled, and any whose automation an earlier failure left undone.
 */
export async function settleFlappingAlerts(): Promise<{ settled: number; automation: AutomationResult }> {
  const settled = await settleFlapping(config().sre.flapWindowSeconds);
  if (settled) publishSreEvent('alert.changed', { flapping_settled: settled });
  return { settled, automation: await automateAlerts() };
}
