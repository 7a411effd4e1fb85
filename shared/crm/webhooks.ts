/**
 * Public lead webhooks: signature verification, single leads and batches.
 *
 * Signatures (only when CRM_WEBHOOK_SECRET is set; otherwise unsigned requests are accepted):
 * - `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw request body>`, or
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (within 5 minutes) and `webhook-signature`
 *   (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`).
 * The key is the secret's UTF-8 bytes, or, for a Standard Webhooks style `whsec_<base64>` secret,
 * the decoded bytes (for both schemes).
 *
 * A delivery id (`webhook-id`, else `Idempotency-Key`) makes a delivery idempotent: a repeated id is
 * answered with the stored outcome of the first one and nothing is written again.
 *
 * Replays: Standard Webhooks signs a timestamp (5-minute tolerance), so a captured request expires. The
 * body-only X-Webhook-Signature does not; a digest seen within CRM_WEBHOOK_REPLAY_WINDOW is refused (409).
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { config } from '../config.js';
import { db } from '../db/index.js';
import { commandRedis } from '../redis.js';
import { ConflictError, PayloadTooLargeError, UnauthorizedError, ValidationError, fieldErrors } from '../errors.js';
import { publishCrmEvent } from './events.js';
import type { NewLead } from './lead.store.js';
import { insertLeads } from './insert-leads.sql.js';
import { resubmitLeads } from './resubmit-leads.sql.js';
import { lockDelivery, recordDelivery } from './webhook-delivery.store.js';
import { leadInput, type BatchError, type BatchResult, type LeadBatchJob, type WebhookLeadResult } from './crm.schemas.js';

type Headers = Record<string, string | string[] | undefined>;
const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

function secretKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * Throws 401 unless the request is signed by one of the two schemes (no-op without a secret).
 * Returns the body-only signature's digest when that scheme was used (it needs the replay check), else undefined.
 */
export function verifyLeadWebhook(rawBody: string, headers: Headers, secret: string): string | undefined {
  if (!secret) return undefined;
  const key = secretKey(secret);
  const hmacHeader = header(headers, 'x-webhook-signature');
  if (hmacHeader !== undefined) {
    const given = /^sha256=([0-9a-f]{64})$/i.exec(hmacHeader.trim())?.[1]?.toLowerCase();
    const expected = createHmac('sha256', key).update(rawBody, 'utf8').digest('hex');
    if (!given || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      throw new UnauthorizedError('X-Webhook-Signature does not match the request body (expected sha256=<hex HMAC-SHA256 of the raw body>).');
    }
    return expected;
  }
  if (header(headers, 'webhook-signature') !== undefined) {
    try {
      new Webhook(key, { format: 'raw' }).verify(rawBody, {
        'webhook-id': header(headers, 'webhook-id') ?? '',
        'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
        'webhook-signature': header(headers, 'webhook-signature') ?? '',
      }, { jsonParse: false });
    } catch (err) {
      throw new UnauthorizedError(`The Standard Webhooks signature was rejected: ${(err as Error).message}.`);
    }
    return undefined;
  }
  throw new UnauthorizedError('A signature is required: X-Webhook-Signature or Standard Webhooks headers.');
}

/**
 * Claims a body-only signature's digest for CRM_WEBHOOK_REPLAY_WINDOW; a digest already claimed is a
 * replay (409), unless both carry the same delivery id (then the idempotent answer of the first applies).
 * Returns the release, for a delivery that was not processed (a 5xx), so the sender's retry is not refused.
 */
export async function claimSignedDelivery(digest: string, deliveryId: string | undefined): Promise<() => Promise<void>> {
  const key = `${config().queues.prefix}:crm:lead-signature:${digest}`;
  const redis = commandRedis('crm');
  const claimed = await redis.set(key, deliveryId ?? '', 'EX', config().crm.replayWindowSeconds, 'NX');
  if (claimed !== 'OK') {
    const first = await redis.get(key);
    if (!deliveryId || first !== deliveryId) {
      throw new ConflictError(
        'This X-Webhook-Signature was already received: the same signed body is not accepted twice (a replay). Send a changed body, or use Standard Webhooks signatures, which are timestamped.',
        [],
        { replay_window_seconds: config().crm.replayWindowSeconds },
      );
    }
    return async () => {};
  }
  return async () => {
    await redis.del(key);
  };
}

/** The delivery id of a request: webhook-id, else Idempotency-Key. */
export function deliveryIdOf(headers: Headers): string | undefined {
  return header(headers, 'webhook-id') || header(headers, 'idempotency-key') || undefined;
}

/** 413 when a batch has more leads than CRM_BATCH_MAX. */
export function assertBatchSize(count: number, max: number): void {
  if (count > max) throw new PayloadTooLargeError(`A batch holds at most ${max} leads; this one has ${count}.`, [], { max_batch_size: max });
}

const withSource = <T extends { source?: string }>(lead: T, source: string | null): T => (source ? { ...lead, source } : lead);

const webhookActor = 'webhook';

/**
 * Creates one lead from the webhook; a lead whose email already exists (case-insensitive) is a
 * resubmission applied to that lead (answered `updated`, 200).
 */
export async function receiveLead(body: unknown, source: string | null, deliveryId?: string): Promise<WebhookLeadResult> {
  const parsed = leadInput.safeParse(body);
  if (!parsed.success) {
    const errors = fieldErrors('body', parsed.error.issues);
    throw new ValidationError(`The lead is invalid: ${errors.map((e) => e.path).join(', ')}.`, errors);
  }
  const lead: NewLead = { ...withSource(parsed.data, source), id: randomUUID() };
  const name = `${lead.first_name} ${lead.last_name}`;
  const result = await db().transaction(async (trx) => {
    const earlier = deliveryId ? await lockDelivery<WebhookLeadResult>(trx, 'lead', deliveryId) : undefined;
    if (earlier) return earlier;
    let result: WebhookLeadResult = { success: true, lead_id: lead.id, message: `Lead created: ${name}`, outcome: 'created' };
    const inserted = await insertLeads([lead], webhookActor, trx);
    if (!inserted.has(lead.id)) {
      const [resubmitted] = await resubmitLeads([{ index: 0, lead }], webhookActor, trx);
      // Deleted between the insert's conflict and our lookup: the sender retries and creates it.
      if (!resubmitted) throw new ConflictError('The lead with this email changed during the request; retry.', []);
      result = { success: true, lead_id: resubmitted.lead_id, message: `Lead updated (resubmission): ${name}`, outcome: 'updated' };
    }
    if (deliveryId) await recordDelivery(trx, deliveryId, 'lead', result);
    return result;
  });
  if (result.outcome === 'created') publishCrmEvent('lead.created', { ids: [result.lead_id], by: webhookActor });
  else publishCrmEvent('lead.changed', { id: result.lead_id, change: 'resubmission', by: webhookActor });
  return result;
}

/**
 * Writes a batch (the crm.ingest-lead-batch job): each lead is validated on its own; a lead repeating
 * an earlier email of the batch is reported; new leads are written by one multi-row statement and
 * leads whose email exists (case-insensitive) are applied to those leads as resubmissions by a
 * second one; the outcome is stored under the delivery id in the same transaction, so a retried or
 * repeated delivery returns that outcome and writes nothing.
 */
export async function ingestLeadBatch(job: LeadBatchJob): Promise<BatchResult> {
  const errors: BatchError[] = [];
  const candidates: Array<{ index: number; lead: NewLead }> = [];
  const seen = new Map<string, number>();
  job.leads.forEach((raw, index) => {
    const parsed = leadInput.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) errors.push({ index, field: issue.path.map(String).join('.') || 'lead', message: issue.message });
      return;
    }
    const email = parsed.data.email?.toLowerCase();
    if (email !== undefined) {
      const first = seen.get(email);
      if (first !== undefined) {
        errors.push({ index, field: 'email', message: `duplicate of the lead at index ${first} in this batch` });
        return;
      }
      seen.set(email, index);
    }
    candidates.push({ index, lead: { ...withSource(parsed.data, job.source), id: randomUUID() } });
  });

  const outcome = await db().transaction(async (trx) => {
    const earlier = await lockDelivery<BatchResult>(trx, 'lead_batch', job.delivery_id);
    if (earlier) return earlier;
    const inserted = await insertLeads(candidates.map((c) => c.lead), webhookActor, trx);
    const skipped = candidates.filter((c) => !inserted.has(c.lead.id));
    const resubmitted = new Map((await resubmitLeads(skipped, webhookActor, trx)).map((r) => [r.index, r]));
    for (const { index } of skipped) {
      if (!resubmitted.has(index)) errors.push({ index, field: 'email', message: 'the lead with this email changed during the delivery; resend it' });
    }
    errors.sort((a, b) => a.index - b.index);
    const created = candidates.filter((c) => inserted.has(c.lead.id));
    const results = candidates
      .map(({ index, lead }) => {
        if (inserted.has(lead.id)) return { index, lead_id: lead.id, outcome: 'created' as const };
        const r = resubmitted.get(index);
        return r && { index, lead_id: r.lead_id, outcome: 'updated' as const };
      })
      .filter((r) => r !== undefined);
    const failed = new Set(errors.map((e) => e.index)).size;
    const result: BatchResult = {
      success: failed === 0,
      total: job.leads.length,
      created: created.length,
      updated: resubmitted.size,
      failed,
      lead_ids: created.map((c) => c.lead.id),
      results,
      errors: errors.length ? errors : null,
    };
    await recordDelivery(trx, job.delivery_id, 'lead_batch', result);
    return result;
  });
  if (outcome.lead_ids.length) publishCrmEvent('lead.created', { ids: outcome.lead_ids.slice(0, 100), by: webhookActor });
  const resubmittedIds = outcome.results.filter((r) => r.outcome === 'updated').map((r) => r.lead_id);
  if (resubmittedIds.length) publishCrmEvent('lead.changed', { ids: resubmittedIds.slice(0, 100), change: 'resubmission', by: webhookActor });
  return outcome;
}
