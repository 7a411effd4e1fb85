/**
 * The alert ingest hot path without its I/O: the webhook's hand-written body check agrees with the
 * schema, and the worker's group commit folds only what one-by-one writes would have written alike.
 */
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { alertmanagerPayload, isPlainAlertmanagerPayload, normalizeAlerts, type NormalizedAlert } from '../../shared/sre/alerts/payloads.js';
import { foldAlerts } from '../../shared/sre/alerts/write-payloads.sql.js';
import { takeBatch } from '../../shared/sre/alerts/ingest.js';
import { fixture } from './alerting-helpers.js';

const firing = fixture('webhook-v4-firing.json');
const mixed = fixture('webhook-v4-mixed-firing-resolved.json');

describe('the webhook body check', () => {
  it('accepts the captured Alertmanager bodies, which the schema returns unchanged', () => {
    for (const body of [firing, mixed]) {
      expect(isPlainAlertmanagerPayload(body)).toBe(true);
      expect(alertmanagerPayload.parse(body)).toEqual(body);
    }
  });

  it('refuses every body the schema refuses or would change, leaving it to the schema', () => {
    const alert = firing.alerts[0];
    const variants: unknown[] = [
      { ...firing, version: '3' },
      { ...firing, status: 'pending' },
      { ...firing, alerts: [] },
      { ...firing, receiver: 7 },
      { ...firing, commonLabels: { a: 1 } },
      { ...firing, truncatedAlerts: 1.5 },
      { ...firing, alerts: [{ ...alert, labels: { alertname: 1 } }] },
      { ...firing, alerts: [{ ...alert, labels: [] }] },
      { ...firing, alerts: [{ ...alert, startsAt: 'yesterday' }] },
      { ...firing, alerts: [{ ...alert, endsAt: null }] },
      { ...firing, alerts: [{ ...alert, fingerprint: 'not-hex' }] },
      { ...firing, alerts: [{ ...alert, generatorURL: 3 }] },
      // Valid, but the schema adds the missing annotations: the check leaves the default to it.
      { ...firing, alerts: [{ ...alert, annotations: undefined }] },
      [],
      null,
    ];
    for (const body of variants) {
      expect(isPlainAlertmanagerPayload(body)).toBe(false);
      const parsed = alertmanagerPayload.safeParse(body);
      // Never true where the schema would refuse or change the body.
      if (parsed.success) expect(parsed.data).not.toEqual(body);
    }
  });
});

const job = (alerts: Array<Pick<NormalizedAlert, 'fingerprint' | 'status'>>, source = 'src-1') => ({
  payload_id: randomUUID(),
  // Each body its own, as distinct webhook payloads are.
  body_digest: createHash('sha256').update(randomUUID()).digest('hex'),
  source_id: source,
  source: 'alertmanager/default',
  received_at: new Date().toISOString(),
  alerts: alerts.map((a) => ({ ...a, labels: { alertname: a.fingerprint }, annotations: {}, values: {}, starts_at: null, ends_at: null, generator_url: '' })),
});

describe('group commit', () => {
  it('writes together payloads whose fingerprints keep one status, up to a change of status or source', () => {
    const a = job([{ fingerprint: 'a', status: 'firing' }, { fingerprint: 'b', status: 'firing' }]);
    const b = job([{ fingerprint: 'a', status: 'firing' }]);
    const resolveA = job([{ fingerprint: 'a', status: 'resolved' }]);
    const otherSource = job([{ fingerprint: 'c', status: 'firing' }], 'src-2');
    expect(takeBatch([a, b, resolveA, b])).toBe(2);
    expect(takeBatch([resolveA, a])).toBe(1);
    expect(takeBatch([a, otherSource])).toBe(1);
    expect(takeBatch([a, a])).toBe(1);
  });

  it('writes two attempts of one body (retry windows apart) in separate writes: the second must see whether the first counted', () => {
    const digest = (c: string) => c.repeat(64);
    const first = { ...job([{ fingerprint: 'a', status: 'firing' }]), body_digest: digest('1') };
    const other = { ...job([{ fingerprint: 'a', status: 'firing' }]), body_digest: digest('2') };
    const retry = { ...job([{ fingerprint: 'a', status: 'firing' }]), body_digest: digest('1') };
    expect(takeBatch([first, other, retry])).toBe(2);
    expect(takeBatch([first, other])).toBe(2);
  });

  it('writes alone a payload that itself fires and resolves one fingerprint', () => {
    const own = job([{ fingerprint: 'a', status: 'firing' }, { fingerprint: 'a', status: 'resolved' }]);
    const next = job([{ fingerprint: 'b', status: 'firing' }]);
    expect(takeBatch([own, next])).toBe(1);
    expect(takeBatch([next, own])).toBe(1);
  });

  it('folds a fingerprint repeated across payloads into one row write: the last content, every firing counted', () => {
    const body = (summary: string) => ({ ...firing, alerts: firing.alerts.map((x: object) => ({ ...x, annotations: { summary } })) });
    const payloads = ['first', 'second', 'third'].map((summary, i) => ({
      payloadId: randomUUID(),
      receivedAt: new Date(Date.UTC(2026, 10, 23, 8, 0, i)).toISOString(),
      alerts: normalizeAlerts(alertmanagerPayload.parse(body(summary))),
    }));
    const { folded, resolvedNotifications } = foldAlerts(payloads);
    expect(resolvedNotifications).toBe(0);
    expect(folded).toHaveLength(firing.alerts.length);
    for (const f of folded) {
      expect(f).toMatchObject({ firings: 3, first_at: payloads[0]!.receivedAt, last_at: payloads[2]!.receivedAt, annotations: { summary: 'third' } });
    }
    expect(folded.map((f) => f.fingerprint)).toEqual(folded.map((f) => f.fingerprint).sort());
  });
});
