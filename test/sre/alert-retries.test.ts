/**
 * A sender's retry of a webhook POST counts once, also across a window boundary and whichever attempt
 * the worker writes first; the same body a window's length later is a repeat notification and counts
 * again (webhookPayloadId, retryOfAdjacentWindow). The window is 4 s here instead of 60 s.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { enqueue, queue } from '../../shared/queues.js';
import { payloadToWrite, webhookJob } from '../../shared/sre/alerts/ingest.js';
import { insertPayloads } from '../../shared/sre/alerts/write-payloads.sql.js';
import { alertmanagerPayload } from '../../shared/sre/alerts/payloads.js';
import { firing } from './alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';

process.env.ALERT_WEBHOOK_TOKEN = 'am-secret-token';
process.env.ALERT_RETRY_WINDOW = '4';
const windowMs = 4000;

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

// The captured body as the sender's bytes: a retry sends exactly these again.
const firingBody = readFileSync(new URL('../../../shared/fixtures/alertmanager/webhook-v4-firing.json', import.meta.url), 'utf8');

const post = async (kind: 'alertmanager' | 'grafana', body: string) => {
  const res = await api.request(`/webhooks/${kind}/default`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer am-secret-token' },
    auth: false,
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { payload_id: string }).payload_id;
};

const counts = async (fingerprints: string[]) => {
  const rows = await db()('sre_alert_instances').whereIn('fingerprint', fingerprints).orderBy('fingerprint').select('fingerprint', 'occurrence_count');
  return Object.fromEntries(rows.map((r) => [r.fingerprint, r.occurrence_count]));
};

/** Whether a transaction waits for the advisory lock of `key` (a bigint key shows as its high and low 32 bits, objsubid 1). */
const lockAwaited = async (key: bigint) => {
  const high = String((key >> 32n) & 0xffffffffn);
  const low = String(key & 0xffffffffn);
  const { rows } = await db().raw("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and classid = ?::oid and objid = ?::oid and objsubid = 1", [high, low]);
  return (rows[0] as { n: number }).n > 0;
};

/** Every queued ingest job has run (the retry's job included), so the counts are final. */
const drained = () =>
  eventually(async () => {
    const c = await queue('sre-alerts').getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(c).every((n) => n === 0);
  }, 10_000, 'the sre-alerts queue to drain');

/** The API's job for one alert of its own (a test's counts are its own), received at a moment the test picks (and so in a window it picks). */
const jobsOf = async (alertname: string) => {
  const source = (await db()('sre_alert_sources').where({ kind: 'alertmanager', name: 'default' }).first()) as { id: string };
  const payload = firing(alertname);
  const body = JSON.stringify(payload);
  return {
    sourceId: source.id,
    fingerprint: payload.alerts[0].fingerprint as string,
    jobAt: (ms: number) => webhookJob({ id: source.id, label: 'alertmanager/default' }, alertmanagerPayload.parse(payload), body, ms),
  };
};

/** Waits for the start of the next retry window, so the steps that must share one do. */
const nextWindow = () => new Promise((r) => setTimeout(r, windowMs - (Date.now() % windowMs) + 50));

describe('webhook retries', () => {
  it("a retry of the same body (the first answer lost, its job already written) counts once; the same body after the window counts again", async () => {
    const fingerprints = ['35168abc2368c313', 'f7ca8b2ae37f4b50'];
    await nextWindow();
    const first = await post('alertmanager', firingBody);
    await eventually(async () => {
      const c = await counts(fingerprints);
      return c['f7ca8b2ae37f4b50'] === 1 && c['35168abc2368c313'] === 1;
    });
    await drained();
    // The sender saw a 503 (say) and POSTs the same bytes again; its job runs and writes nothing.
    const retry = await post('alertmanager', firingBody);
    expect(retry).toBe(first);
    await drained();
    expect(await counts(fingerprints)).toEqual({ '35168abc2368c313': 1, f7ca8b2ae37f4b50: 1 });

    // Alertmanager's repeat notification of the unchanged group: the same bytes, more than a window
    // after the first attempt was received (not sent: a cold API may take a while to read it).
    const { received_at: firstReceived } = await db()('sre_alert_payloads').where({ id: first }).first('received_at');
    await new Promise((r) => setTimeout(r, (firstReceived as Date).getTime() + windowMs + 100 - Date.now()));
    const repeat = await post('alertmanager', firingBody);
    expect(repeat).not.toBe(first);
    await eventually(async () => {
      const c = await counts(fingerprints);
      return c['f7ca8b2ae37f4b50'] === 2 && c['35168abc2368c313'] === 2;
    });
  });

  it('a retry close behind the first POST (both still queued) counts once, for Grafana too', async () => {
    const body = JSON.stringify({
      receiver: 'contact point',
      status: 'firing',
      orgId: 1,
      alerts: [{ status: 'firing', labels: { alertname: 'DiskFull', host: 'db-2' }, annotations: {}, startsAt: '2026-11-23T08:00:00Z', endsAt: '0001-01-01T00:00:00Z', fingerprint: 'ab12cd34ef56ab78', values: { B: 97.5 } }],
      groupKey: '{}:{alertname="DiskFull"}',
      title: '[FIRING:1] DiskFull',
    });
    await nextWindow();
    const [a, b] = await Promise.all([post('grafana', body), post('grafana', body)]);
    expect(b).toBe(a);
    // A changed value is a new notification, not a retry.
    const other = await post('grafana', body.replace('97.5', '98.1'));
    expect(other).not.toBe(a);
    await eventually(async () => (await counts(['ab12cd34ef56ab78']))['ab12cd34ef56ab78'] === 2);
    await drained();
    expect(await counts(['ab12cd34ef56ab78'])).toEqual({ ab12cd34ef56ab78: 2 });
  });

  it('a retry across a window boundary counts once, also when its job is written before the first attempt\'s; more than a window later the same body counts again', async () => {
    const { fingerprint, jobAt } = await jobsOf('CrossWindow');
    const boundary = Math.floor(Date.now() / windowMs) * windowMs - 10 * windowMs;
    const first = jobAt(boundary - 300);
    const retry = jobAt(boundary + 400);
    const later = jobAt(boundary + 900);
    expect(retry.payload_id).not.toBe(first.payload_id);

    // The retry's job first (the API gave up on the first attempt's enqueue, which went through after).
    await enqueue('sre.alerts-ingest', retry);
    await drained();
    await enqueue('sre.alerts-ingest', first);
    await drained();
    expect(await counts([fingerprint])).toEqual({ [fingerprint]: 1 });

    // Two more attempts queued together, possibly written by concurrent writes, with the ids already written (the first's window, the retry's).
    await Promise.all([enqueue('sre.alerts-ingest', later), enqueue('sre.alerts-ingest', jobAt(boundary - 3000))]);
    await drained();
    expect(await counts([fingerprint])).toEqual({ [fingerprint]: 1 });

    // The repeat notification: the same bytes in the next window, more than a window after the attempt that counted (the retry's).
    await enqueue('sre.alerts-ingest', jobAt(boundary + 400 + windowMs + 100));
    await drained();
    expect(await counts([fingerprint])).toEqual({ [fingerprint]: 2 });
  });

  it('attempts of one body in adjacent windows queued at once count once', async () => {
    const { fingerprint, jobAt } = await jobsOf('QueuedTogether');
    const boundary = Math.floor(Date.now() / windowMs) * windowMs - 20 * windowMs;
    const jobs = [boundary - 100, boundary + 100, boundary + 200].map(jobAt);
    await Promise.all(jobs.map((j) => enqueue('sre.alerts-ingest', j)));
    await drained();
    expect(await counts([fingerprint])).toEqual({ [fingerprint]: 1 });
    // Every id the webhook answered is written (the last two attempts share one); the one that did not count names the one that did.
    const rows = await db()('sre_alert_payloads').whereIn('id', jobs.map((j) => j.payload_id)).select('id', 'retry_of');
    expect(rows).toHaveLength(2);
    const counted = rows.filter((r) => r.retry_of === null);
    expect(counted).toHaveLength(1);
    for (const r of rows) if (r.retry_of !== null) expect(r.retry_of).toBe(counted[0]!.id);
  });

  it('of two attempts written by concurrent transactions, the second waits for the first and does not count, in either order', async () => {
    const boundary = Math.floor(Date.now() / windowMs) * windowMs - 30 * windowMs;
    for (const [name, order] of [['FirstThenRetry', [-100, 100]], ['RetryThenFirst', [100, -100]]] as const) {
      const { sourceId, jobAt } = await jobsOf(name);
      const [one, other] = order.map((ms) => payloadToWrite(jobAt(boundary + ms)));
      const trx = await db().transaction();
      let otherDone = false;
      let otherFresh: Promise<Set<string>>;
      try {
        const oneFresh = await insertPayloads(trx, sourceId, [one!], windowMs / 1000);
        expect(oneFresh).toEqual(new Set([one!.payloadId]));
        otherFresh = db()
          .transaction((t) => insertPayloads(t, sourceId, [other!], windowMs / 1000))
          .finally(() => (otherDone = true));
        // The other attempt waits on the first transaction's lock on the body, so it will see its row.
        await eventually(() => lockAwaited(other!.sameBody!.lockKey), 10_000, 'the other attempt to wait for the body lock');
        expect(otherDone).toBe(false);
        await trx.commit();
      } finally {
        if (!trx.isCompleted()) await trx.rollback();
      }
      expect(await otherFresh).toEqual(new Set());
    }
  });
});
