/** Public lead webhooks: one lead, or a batch written through the crm queue. */
import type { Middleware } from 'koa';
import { ApiRouter } from '../routing.js';
import { config } from '../../shared/config.js';
import { assertBatchSize, claimSignedDelivery, deliveryIdOf, receiveLead, verifyLeadWebhook } from '../../shared/crm/webhooks.js';
import { problemKindOf } from '../../shared/errors.js';
import { submitLeadBatch } from '../../shared/crm/lead-batches.js';
import { batchResult, leadInput, webhookLeadResult } from '../../shared/crm/crm.schemas.js';
import { batchAccepted, leadBatchBody, webhookHeaders } from './webhooks.schemas.js';

const security = [
  '**Signatures.** When CRM_WEBHOOK_SECRET is set, a request must carry either `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body>`',
  'or valid Standard Webhooks headers (`webhook-id`, `webhook-timestamp` within 5 minutes, `webhook-signature`); an absent or wrong',
  'signature is a 401 and nothing is stored. The HMAC key is the secret\'s UTF-8 bytes, or the decoded bytes of a `whsec_<base64>` secret.',
  'When the secret is unset (only under npm run dev and in tests; every other start requires it), unsigned requests are accepted.',
  '',
  '**Replays.** Standard Webhooks is the recommended scheme: its signature covers a timestamp, so a captured request is refused after 5 minutes.',
  'A body signed with `X-Webhook-Signature` is accepted once within CRM_WEBHOOK_REPLAY_WINDOW (default 24 h): the same signed body again is a 409',
  '(a replay), unless it carries the same delivery id as the first (then the first outcome is returned). A delivery that failed with a 5xx may be re-sent.',
  '',
  '**Delivery ids.** `webhook-id` (else `Idempotency-Key`) identifies a delivery: a repeated id is answered with the first outcome and writes nothing',
  '(ids of single-lead and batch deliveries are separate). Without an id a request is processed each time (a duplicate email is still refused).',
  '',
  '**Fields.** first_name and last_name 1–100 characters (required); email must be an email address (≤ 254); phone ≤ 50; company and title ≤ 200;',
  'source ≤ 100; source_detail ≤ 500; estimated_value ≤ 50 (kept as a string); notes ≤ 10,000; custom_data any JSON object.',
  'Emails are unique case-insensitively across leads.',
].join('\n');

/** Signature check before any parsing of the lead fields, on the raw body the body parser kept; then the replay check. */
const signed: Middleware = async (ctx, next) => {
  const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
  const digest = verifyLeadWebhook(raw, ctx.headers, config().crm.webhookSecret);
  if (!digest) return next();
  const release = await claimSignedDelivery(digest, deliveryIdOf(ctx.headers));
  try {
    await next();
  } catch (err) {
    // Not processed (a fault on our side): the sender's retry of the same body must be accepted.
    if (problemKindOf(err).status >= 500) await release().catch(() => undefined);
    throw err;
  }
  if (ctx.status >= 500) await release().catch(() => undefined);
};

const resubmission = [
  '**Repeat submissions.** A lead whose email matches an existing lead (case-insensitive) updates that lead instead of failing:',
  'its empty fields are filled with the submitted values, `custom_data` gains the keys it lacked, and values that differ are kept as they are;',
  'a `resubmission` entry in the lead\'s history (GET /api/v1/leads/{lead_id}/history) records the submission\'s source and detail and the',
  'filled and differing fields. The status never changes: a converted (or unqualified) lead is not reopened, the resubmission is only recorded.',
].join(' ');

export function webhookRoutes(): ApiRouter {
  const router = new ApiRouter();
  router.koa.use('/api/v1/webhooks/leads', signed);
  return router
    .route({
      method: 'post',
      path: '/api/v1/webhooks/leads',
      tags: ['crm webhooks'],
      summary: 'Create one lead (public webhook)',
      description: `${security}\n\n${resubmission}\n\nThe answer's \`message\` names the lead; \`outcome\` is \`created\` (201) or \`updated\` (200).`,
      auth: 'public',
      request: { body: leadInput, headers: webhookHeaders },
      responses: {
        201: { description: 'Lead created', schema: webhookLeadResult },
        200: { description: 'Repeat submission applied to the existing lead (`outcome: updated`)', schema: webhookLeadResult },
      },
      errors: { 401: 'Signature absent or wrong (when CRM_WEBHOOK_SECRET is set)', 409: 'The matching lead was deleted while the request ran (retry), or a replayed X-Webhook-Signature body' },
      handler: async ({ body, headers }, ctx) => {
        const result = await receiveLead(body, headers['x-source'] ?? null, deliveryIdOf(ctx.headers));
        ctx.status = result.outcome === 'created' ? 201 : 200;
        return result;
      },
    })
    .route({
      method: 'post',
      path: '/api/v1/webhooks/leads/batch',
      tags: ['crm webhooks'],
      summary: 'Create leads in a batch (public webhook)',
      description: [
        security,
        '',
        '**Batches.** At most CRM_BATCH_MAX leads (default 1,000), else 413 (as is a body over BODY_LIMIT). Each lead is validated on its own: invalid leads and leads',
        'repeating an earlier email of the same batch are counted in `failed` and described in',
        '`errors` as `{index, field, message}` (index in `leads`, field e.g. `first_name` or `email`; several entries per lead possible);',
        'the others are created, or, when their email exists, applied as resubmissions. `success` is true when no lead failed. `errors` is null when there are none.',
        '`created` and `lead_ids` count new leads (the spec\'s fields); `updated` counts resubmissions; `results` lists every successful',
        'entry as `{index, lead_id, outcome}` with `outcome` `created` or `updated`.',
        '',
        resubmission,
        '',
        '**Queueing.** The batch goes through the `crm` queue and is written by one multi-row statement. The request waits up to',
        'CRM_BATCH_WAIT_MS (default 15 s) for the outcome and answers 200 with it. Past that bound it answers 202: the batch is accepted',
        'and will be written; the body has the same fields with `created`/`failed` 0 and empty `lead_ids` (not yet known) plus',
        '`processing: true` and the `delivery_id` (generated when the request had none); re-sending the same body with that id as',
        '`webhook-id` or `Idempotency-Key` returns the outcome once written, without writing twice.',
      ].join('\n'),
      auth: 'public',
      request: { body: leadBatchBody, headers: webhookHeaders },
      responses: {
        200: { description: 'The batch was processed', schema: batchResult },
        202: { description: 'Accepted, still processing (past CRM_BATCH_WAIT_MS)', schema: batchAccepted },
      },
      errors: { 401: 'Signature absent or wrong (when CRM_WEBHOOK_SECRET is set)', 409: 'A replayed X-Webhook-Signature body', 413: 'More than CRM_BATCH_MAX leads' },
      handler: async ({ body, headers }, ctx) => {
        assertBatchSize(body.leads.length, config().crm.batchMax);
        const outcome = await submitLeadBatch(body.leads, headers['x-source'] ?? null, deliveryIdOf(ctx.headers));
        if (outcome.done) return outcome.result;
        ctx.status = 202;
        return { success: true, total: body.leads.length, created: 0, updated: 0, failed: 0, lead_ids: [], results: [], errors: null, processing: true, delivery_id: outcome.delivery_id };
      },
    });
}
