/** Alert ingestion: the webhook side (authenticate, validate, enqueue) and the worker side (dedup write, flapping, automation). */
import { createHash } from 'node:crypto';
import { config } from '../../config.js';
import { db } from '../../db/index.js';
import { enqueue, type JobPayload } from '../../queues.js';
import { automateAlerts, type AutomationResult } from '../automation/automation.js';
import type { AuthenticatedSource } from './alert-source.store.js';
import { evaluateFlapping, settleFlapping } from './alert.store.js';
import { writePayloads, type IngestResult, type PayloadToWrite, type SameBody } from './write-payloads.sql.js';
import { normalizeAlerts, type AlertmanagerPayload, type GrafanaPayload } from './payloads.js';
import { publishSreEvent } from '../events.js';

export interface Accepted {
  payload_id: string;
  source: string;
  accepted: number;
}

/**
 * The id of a webhook payload, derived from what the sender sent so that its retry is recognised: the
 * API can answer 503 although the job was queued (a Redis command timing out under CPU starvation),
 * and the sender then POSTs the same bytes again. sre_alert_payloads writes each id once, so the
 * retry's alerts are not counted a second time.
 *
 * The same bytes are not always a retry. Alertmanager (and Grafana, which notifies through its
 * pipeline) leaves endsAt at the zero time for firing alerts, so a repeat notification of an
 * unchanged group (repeat_interval) is byte for byte the first one; it is a new occurrence and must
 * count. The two differ in time: a sender retries a failed POST with exponential backoff (0.5 s,
 * 0.75 s, 1.1 s…) only until the notification's timeout (group_interval), while it re-sends an
 * unchanged group no sooner than max(group_interval, repeat_interval), "usually ~5m or more". So the id
 * hashes the source, the raw body's digest and the aligned ALERT_RETRY_WINDOW (60 s) it arrived in:
 * the API needs no lookup to name it. A retry that crosses a window boundary gets the next window's
 * id; the worker recognises it by the body digest the job carries (retryOfAdjacentWindow). The raw body
 * is hashed as received (no second JSON walk on the hot path); a sender re-serialising differently is
 * a different payload.
 */
export function webhookPayloadId(sourceId: string, rawBody: string, receivedAtMs: number): { payloadId: string; bodyDigest: string } {
  const bodyDigest = createHash('sha256').update(rawBody).digest('hex');
  return { payloadId: payloadIdIn(sourceId, bodyDigest, windowOf(receivedAtMs)), bodyDigest };
}

const windowOf = (ms: number) => Math.floor(ms / (config().sre.retryWindowSeconds * 1000));

function payloadIdIn(sourceId: string, bodyDigest: string, window: number): string {
  const h = createHash('sha256').update(`${sourceId}\n${window}\n${bodyDigest}`).digest();
  // A UUID (the column's type) of version 8, RFC 9562's "custom" layout.
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex', 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * What the worker needs to recognise a retry across a window boundary: the ids the same body had in
 * the windows before and after this one (a payload written under either, received less than
 * ALERT_RETRY_WINDOW apart, makes this one a retry), and a Postgres advisory lock key per body, so
 * that two attempts written by concurrent transactions are checked one after the other. After
 * instead of only before: the API may enqueue a retry before the first attempt whose answer it gave
 * up on.
 */
function retryOfAdjacentWindow(job: IngestJob): SameBody {
  const window = windowOf(Date.parse(job.received_at));
  return {
    lockKey: BigInt.asIntN(64, BigInt(`0x${job.body_digest.slice(0, 16)}`)),
    adjacentIds: [payloadIdIn(job.source_id, job.body_digest, window - 1), payloadIdIn(job.source_id, job.body_digest, window + 1)],
  };
}

/** An ingest job as the store writes it. */
export function payloadToWrite(job: IngestJob): PayloadToWrite {
  return { payloadId: job.payload_id, receivedAt: job.received_at, alerts: job.alerts, sameBody: retryOfAdjacentWindow(job) };
}

/**
 * The ingest job of a webhook payload from an authenticated source (authenticateSource), received at
 * `receivedAtMs`. `rawBody` is the body as received, which names the payload (webhookPayloadId).
 */
export function webhookJob(source: AuthenticatedSource, payload: AlertmanagerPayload | GrafanaPayload, rawBody: string, receivedAtMs: number): IngestJob {
  const { payloadId, bodyDigest } = webhookPayloadId(source.id, rawBody, receivedAtMs);
  return {
    payload_id: payloadId,
    body_digest: bodyDigest,
    source_id: source.id,
    source: source.label,
    received_at: new Date(receivedAtMs).toISOString(),
    alerts: normalizeAlerts(payload),
  };
}

/** Enqueues the payload's alerts (webhookJob); nothing is written before the worker runs. */
export async function acceptWebhook(source: AuthenticatedSource, payload: AlertmanagerPayload | GrafanaPayload, rawBody: string): Promise<Accepted> {
  const job = webhookJob(source, payload, rawBody, Date.now());
  await enqueue('sre.alerts-ingest', job);
  return { payload_id: job.payload_id, source: source.label, accepted: job.alerts.length };
}

type IngestJob = JobPayload<'sre.alerts-ingest'>;
type Ingested = IngestResult & { automation?: AutomationResult };

/**
 * Payloads a batch write takes at most (~3 MB of statement parameters at 100 alerts each). The
 * sre-alerts queue's concurrency is twice this, so the next batch fills while one is written.
 */
export const maxBatch = 64;
/**
 * Batch writes in flight at once: the second overlaps the first's round trips and commit with its own
 * folding; rows are locked in one order (fingerprint, "C"), so two writers wait, never deadlock.
 */
const writers = 2;

/** Jobs of this process waiting for the next batch write, in the order the worker took them. */
const waiting: Array<{ job: IngestJob; resolve: (r: Ingested) => void; reject: (err: unknown) => void }> = [];
let writing = 0;

/**
 * Writes one accepted payload (idempotent per payload id), re-evaluates flapping, then runs incident
 * rules and runbooks. Group commit: the payloads whose jobs arrive while a write is in flight are
 * written together by the next one (one transaction, one statement, one row write per fingerprint),
 * so under load the Postgres work per alert shrinks instead of queueing. An idle worker writes a
 * payload at once.
 */
export function ingestPayload(job: IngestJob): Promise<Ingested> {
  return new Promise((resolve, reject) => {
    waiting.push({ job, resolve, reject });
    void drain();
  });
}

async function drain(): Promise<void> {
  if (writing >= writers) return;
  writing += 1;
  try {
    while (waiting.length) {
      const batch = waiting.splice(0, takeBatch(waiting.map((w) => w.job)));
      try {
        const results = await ingestBatch(batch.map((w) => w.job));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        if (batch.length === 1) batch[0]!.reject(err);
        // One payload Postgres refuses must not fail its neighbours: each is written (or fails) alone.
        else for (const w of batch) await ingestBatch([w.job]).then(([r]) => w.resolve(r!), w.reject);
      }
    }
  } finally {
    writing -= 1;
  }
}

/**
 * How many of the waiting jobs (from the first) one write may fold together: one source, distinct
 * payload ids and bodies (one statement cannot see whether another attempt of a body it writes
 * counted), and each fingerprint with one status across them, so folding never merges a resolve
 * with a firing of the same fingerprint (their order is a state change and flapping counts it). A
 * payload that itself both fires and resolves a fingerprint is written alone, as it always was.
 */
export function takeBatch(jobs: readonly IngestJob[]): number {
  const statuses = new Map<string, string>();
  const ids = new Set<string>();
  const bodies = new Set<string>();
  let taken = 0;
  for (const job of jobs.slice(0, maxBatch)) {
    if (job.source_id !== jobs[0]!.source_id || job.source !== jobs[0]!.source || ids.has(job.payload_id)) break;
    // A second attempt of a body goes to the next write, which sees whether the first one counted.
    if (bodies.has(job.body_digest)) break;
    const own = new Map<string, string>();
    let mixed = false;
    for (const a of job.alerts) {
      const seen = own.get(a.fingerprint);
      if (seen !== undefined && seen !== a.status) mixed = true;
      own.set(a.fingerprint, a.status);
    }
    if (mixed) return taken || 1;
    for (const [fp, status] of own) if ((statuses.get(fp) ?? status) !== status) return taken;
    for (const [fp, status] of own) statuses.set(fp, status);
    ids.add(job.payload_id);
    bodies.add(job.body_digest);
    taken += 1;
  }
  return taken;
}

/** Writes payloads of one source in one transaction, publishes what changed, then automates new alerts. */
async function ingestBatch(jobs: IngestJob[]): Promise<Ingested[]> {
  const { flapThreshold, flapWindowSeconds } = config().sre;
  const { source_id: sourceId, source } = jobs[0]!;
  const written = await db().transaction(async (trx) => {
    const w = await writePayloads(trx, {
      sourceId,
      actor: `sender:${source}`,
      retryWindowSeconds: config().sre.retryWindowSeconds,
      payloads: jobs.map(payloadToWrite),
    });
    await evaluateFlapping(trx, sourceId, w.changed, flapThreshold, flapWindowSeconds);
    return w;
  });
  const { freshIds, ...counts } = written;
  if (freshIds.size && counts.changed.length) {
    publishSreEvent(counts.opened > 0 ? 'alert.fired' : 'alert.changed', {
      source,
      opened: counts.opened,
      updated: counts.updated,
      resolved: counts.resolved,
      fingerprints: counts.changed.slice(0, 100),
    });
  }
  const results = jobs.map((j) => ({ ...counts, fresh: freshIds.has(j.payload_id), batch: jobs.length }));
  // A retried job (not fresh) may have died between commit and automation: run it again (it is idempotent).
  if (counts.opened > 0 || results.some((r) => !r.fresh)) {
    const automation = await automateAlerts();
    return results.map((r) => ({ ...r, automation }));
  }
  return results;
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
