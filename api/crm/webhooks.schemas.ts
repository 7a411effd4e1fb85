/** Request and response schemas of the public lead webhooks beyond the lead records (shared/crm/crm.schemas.ts). */
import { z } from '../../shared/zod.js';
import { batchResult } from '../../shared/crm/crm.schemas.js';

/** The signature, delivery id and source headers both webhooks read. */
export const webhookHeaders = z.object({
  'x-source': z.string().trim().min(1).max(100).optional().openapi({ description: 'Overrides the `source` of every lead in the request' }),
  'x-webhook-signature': z.string().optional().openapi({ description: '`sha256=<hex HMAC-SHA256 of the raw body>` keyed by CRM_WEBHOOK_SECRET' }),
  'webhook-id': z.string().max(200).optional().openapi({ description: 'Standard Webhooks message id; also the delivery id' }),
  'webhook-timestamp': z.string().optional().openapi({ description: 'Standard Webhooks: Unix seconds, within 5 minutes of now' }),
  'webhook-signature': z.string().optional().openapi({ description: 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`' }),
  'idempotency-key': z.string().max(200).optional().openapi({ description: 'Delivery id when webhook-id is absent' }),
});
/** The leads stay unknown here: each is validated on its own, so one bad lead fails alone. */
export const leadBatchBody = z.object({
  leads: z.array(z.unknown()).min(1, 'needs at least one lead').openapi({ type: 'array', items: { $ref: '#/components/schemas/LeadInput' }, description: 'Lead objects, validated one by one' }),
});
export const batchAccepted = batchResult.extend({ processing: z.literal(true), delivery_id: z.string() });
