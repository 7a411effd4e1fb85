/** Request and response schemas of the alert routes (sources, alerts). */
import { z, uuid } from '../../../shared/zod.js';
import { labelQuery, offsetPageQuery, offsetPageSchema } from '../../../shared/sre/listing.js';
import { labels, ts, csv, csvText, bool } from '../common.schemas.js';
import { sourceNamePattern } from '../../../shared/sre/alerts/alert-source.store.js';

// --- sources
export const sourceKind = z.enum(['alertmanager', 'grafana']);
export const alertSource = z
  .object({ id: z.string(), kind: sourceKind, name: z.string(), enabled: z.boolean(), has_own_secret: z.boolean(), webhook_path: z.string(), created_at: ts, updated_at: ts })
  .openapi('AlertSource');
export const sourceCreate = z.object({
  kind: sourceKind,
  name: z.string().regex(sourceNamePattern, 'must be lowercase letters, digits, - or _ (max 63)'),
  secret: z.string().min(8).max(500).nullable().optional().openapi({ description: 'bearer token / basic-auth password; omitted or null: ALERT_WEBHOOK_TOKEN applies' }),
  enabled: z.boolean().default(true),
});
export const sourcePatch = z
  .object({ secret: z.string().min(8).max(500).nullable().optional(), enabled: z.boolean().optional() })
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const sourceQuery = z.object({ ...offsetPageQuery, kind: sourceKind.optional(), enabled: bool });
export const sourcePage = offsetPageSchema(alertSource, 'AlertSourcePage');

// --- alerts
export const alertStatus = z.enum(['firing', 'acknowledged', 'resolved']);
export const alertInstance = z
  .object({
    id: z.string(),
    source: z.object({ id: z.string(), kind: z.string(), name: z.string() }),
    fingerprint: z.string(),
    status: alertStatus,
    alertname: z.string(),
    severity: z.string(),
    labels,
    annotations: labels,
    values: z.record(z.string(), z.unknown()),
    generator_url: z.string(),
    starts_at: ts.nullable(),
    ends_at: ts.nullable(),
    first_received_at: ts,
    last_received_at: ts,
    occurrence_count: z.number().int(),
    flapping: z.boolean(),
    acknowledged_at: ts.nullable(),
    acknowledged_by: z.string().nullable(),
    resolved_at: ts.nullable(),
    resolved_by: z.string().nullable(),
    incident_id: z.string().nullable(),
    silenced: z.boolean().openapi({ description: 'an active silence matches this (not resolved) alert: it opens no incident and runs no runbook while silenced' }),
    silenced_by: z.array(z.string()).openapi({ description: 'ids of the active silences matching it' }),
    created_at: ts,
    updated_at: ts,
  })
  .openapi('AlertInstance');
export const alertPage = offsetPageSchema(alertInstance, 'AlertInstancePage');
export const alertQuery = z.object({
  ...offsetPageQuery,
  status: csv(['firing', 'acknowledged', 'resolved']),
  severity: csvText,
  source: z.string().optional().openapi({ description: 'source as kind/name, name, or id' }),
  label: labelQuery,
  fingerprint: z.string().optional(),
  flapping: bool,
  incident_id: uuid().optional(),
  silenced: bool,
  q: z.string().min(1).max(200).optional().openapi({ description: 'text matched (case-insensitive) in the alert name, labels and annotations' }),
});
export const alertCountsSchema = z
  .object({
    by_status: z.object({ firing: z.number().int(), acknowledged: z.number().int(), resolved: z.number().int() }),
    by_severity: z.record(z.string(), z.number().int()).openapi({ description: 'live alerts (firing or acknowledged) per severity' }),
  })
  .openapi('AlertCounts');
export const alertHistoryItem = z
  .object({ id: z.string(), alert_id: z.string(), from: alertStatus.nullable(), to: alertStatus, by: z.string(), note: z.string().nullable(), at: ts })
  .openapi('AlertStateChange');
export const alertHistoryPage = offsetPageSchema(alertHistoryItem, 'AlertStateChangePage');
export const pageOnly = z.object(offsetPageQuery);
