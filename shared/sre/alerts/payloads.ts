/**
 * What the two senders POST, as zod schemas (unknown fields tolerated), and their normalisation into
 * one alert shape. Alertmanager: webhook payload version "4". Grafana: unified alerting webhook
 * (the same envelope plus orgId, title, state, message; alerts carry values, silenceURL, dashboardURL...).
 */
import { z } from '../../zod.js';
import { alertFingerprint } from './fingerprint.js';

const labelSet = z.record(z.string(), z.string());
// Go's zero time ("0001-01-01T00:00:00Z") means "not set"; any RFC 3339 timestamp is accepted.
const timestamp = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an RFC 3339 timestamp');
const fingerprint = z.string().regex(/^[0-9a-fA-F]{1,64}$/, 'must be hexadecimal').optional();

const senderAlert = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: labelSet,
  annotations: labelSet.default({}),
  startsAt: timestamp.optional(),
  endsAt: timestamp.optional(),
  generatorURL: z.string().optional(),
  fingerprint,
});

const envelope = {
  receiver: z.string().optional(),
  status: z.enum(['firing', 'resolved']),
  groupLabels: labelSet.optional(),
  commonLabels: labelSet.optional(),
  commonAnnotations: labelSet.optional(),
  externalURL: z.string().optional(),
  groupKey: z.string().optional(),
  truncatedAlerts: z.number().int().optional(),
};

export const alertmanagerPayload = z
  .looseObject({
    version: z.literal('4', { error: 'only Alertmanager webhook version "4" is supported' }),
    ...envelope,
    alerts: z.array(senderAlert).min(1),
  })
  .openapi('AlertmanagerWebhook', { description: 'Alertmanager webhook payload, version "4"' });

export const grafanaPayload = z
  .looseObject({
    version: z.string().optional(),
    orgId: z.number().int().optional(),
    title: z.string().optional(),
    state: z.string().optional(),
    message: z.string().optional(),
    ...envelope,
    alerts: z.array(
      senderAlert.extend({
        values: z.record(z.string(), z.number().nullable()).nullable().optional(),
        valueString: z.string().optional(),
        silenceURL: z.string().optional(),
        dashboardURL: z.string().optional(),
        panelURL: z.string().optional(),
        imageURL: z.string().optional(),
      }),
    ).min(1),
  })
  .openapi('GrafanaWebhook', { description: 'Grafana unified alerting webhook payload' });

export type AlertmanagerPayload = z.output<typeof alertmanagerPayload>;
export type GrafanaPayload = z.output<typeof grafanaPayload>;

/** One alert as the ingest job carries it. */
export const normalizedAlert = z.object({
  fingerprint: z.string(),
  status: z.enum(['firing', 'resolved']),
  labels: labelSet,
  annotations: labelSet,
  values: z.record(z.string(), z.unknown()),
  starts_at: z.string().nullable(),
  ends_at: z.string().nullable(),
  generator_url: z.string(),
});
export type NormalizedAlert = z.output<typeof normalizedAlert>;

const zeroTime = /^0001-01-01/;
const time = (s: string | undefined) => (s && !zeroTime.test(s) ? new Date(s).toISOString() : null);

/** The sender's alerts in one shape; the sender's fingerprint is kept as sent, else Alertmanager's is computed. */
export function normalizeAlerts(payload: AlertmanagerPayload | GrafanaPayload): NormalizedAlert[] {
  return payload.alerts.map((a) => {
    const values = (a as { values?: Record<string, unknown> | null }).values;
    const valueString = (a as { valueString?: string }).valueString;
    return {
      fingerprint: a.fingerprint ?? alertFingerprint(a.labels),
      status: a.status,
      labels: a.labels,
      annotations: a.annotations,
      values: values ?? (valueString ? { valueString } : {}),
      starts_at: time(a.startsAt),
      ends_at: time(a.endsAt),
      generator_url: a.generatorURL ?? '',
    };
  });
}
