/**
 * What the two senders POST, as zod schemas (unknown fields tolerated), and their normalisation into
 * one alert shape. Alertmanager: webhook payload version "4". Grafana: unified alerting webhook
 * (the same envelope plus orgId, title, state, message; alerts carry values, silenceURL, dashboardURL...).
 */
import { z } from '../../zod.js';
import { alertFingerprint } from './fingerprint.js';

// An object of string values: written as a catchall rather than z.record, which checks every key as
// well as its value (a quarter of the webhook's validation time); the errors name each bad key alike.
const labelSet = z.object({}).catchall(z.string());
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

const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
const optionalStringMap = (v: unknown) => v === undefined || isStringMap(v);
const hexFingerprint = /^[0-9a-fA-F]{1,64}$/;
// Senders repeat the same few timestamps: the ones already found valid are remembered (as in time()).
const validTimes = new Set<string>();
function validTime(v: unknown): boolean {
  if (v === undefined) return true;
  if (typeof v !== 'string') return false;
  if (validTimes.has(v)) return true;
  if (Number.isNaN(Date.parse(v))) return false;
  if (validTimes.size >= 10_000) validTimes.clear();
  validTimes.add(v);
  return true;
}

/**
 * The webhook's hot path: true only for a body that alertmanagerPayload accepts and returns unchanged
 * (every field it checks present in its usual form, annotations included), so the route can take the
 * body as parsed instead of letting zod walk and copy its 100 alerts. Anything else returns false and
 * goes through the schema, which accepts it or names what is wrong.
 */
export function isPlainAlertmanagerPayload(v: unknown): v is AlertmanagerPayload {
  if (!isObject(v) || v.version !== '4' || (v.status !== 'firing' && v.status !== 'resolved')) return false;
  if (!optionalString(v.receiver) || !optionalString(v.externalURL) || !optionalString(v.groupKey)) return false;
  if (!optionalStringMap(v.groupLabels) || !optionalStringMap(v.commonLabels) || !optionalStringMap(v.commonAnnotations)) return false;
  if (v.truncatedAlerts !== undefined && !Number.isSafeInteger(v.truncatedAlerts)) return false;
  const alerts = v.alerts;
  if (!Array.isArray(alerts) || alerts.length === 0) return false;
  for (const a of alerts) {
    if (!isObject(a) || (a.status !== 'firing' && a.status !== 'resolved') || !isStringMap(a.labels) || !isStringMap(a.annotations)) return false;
    if (!validTime(a.startsAt) || !validTime(a.endsAt) || !optionalString(a.generatorURL)) return false;
    if (a.fingerprint !== undefined && !(typeof a.fingerprint === 'string' && hexFingerprint.test(a.fingerprint))) return false;
  }
  return true;
}

export type AlertmanagerPayload = z.output<typeof alertmanagerPayload>;
export type GrafanaPayload = z.output<typeof grafanaPayload>;

/** One alert as the ingest job carries it. */
export interface NormalizedAlert {
  fingerprint: string;
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  values: Record<string, unknown>;
  starts_at: string | null;
  ends_at: string | null;
  generator_url: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
function isStringMap(v: unknown): v is Record<string, string> {
  if (!isObject(v)) return false;
  for (const key in v) if (typeof v[key] !== 'string') return false;
  return true;
}
const isTime = (v: unknown) => v === null || typeof v === 'string';

/** Whether a value has the shape of a NormalizedAlert (checked by hand: see normalizedAlerts). */
function isNormalizedAlert(a: unknown): a is NormalizedAlert {
  return (
    isObject(a) &&
    typeof a.fingerprint === 'string' &&
    (a.status === 'firing' || a.status === 'resolved') &&
    isStringMap(a.labels) &&
    isStringMap(a.annotations) &&
    isObject(a.values) &&
    isTime(a.starts_at) &&
    isTime(a.ends_at) &&
    typeof a.generator_url === 'string'
  );
}

/**
 * The alerts of an ingest job. They come from a body the webhook schema has already validated, so the
 * job's schema checks their shape by hand instead of walking every label of 100 alerts with zod again
 * on each side of the queue (that walk cost ~260 µs a payload in enqueue() and as much in the worker).
 */
export const normalizedAlerts = z.array(z.custom<NormalizedAlert>(isNormalizedAlert, 'is not a normalized alert')).min(1);

const zeroTime = /^0001-01-01/;
// Senders repeat an alert's startsAt in every notification of it, and parsing dates costs ~1 µs: the
// conversions of recent timestamps are kept.
const isoTimes = new Map<string, string>();
function time(s: string | undefined): string | null {
  if (!s || zeroTime.test(s)) return null;
  let iso = isoTimes.get(s);
  if (iso === undefined) {
    if (isoTimes.size >= 10_000) isoTimes.clear();
    iso = new Date(s).toISOString();
    isoTimes.set(s, iso);
  }
  return iso;
}

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
