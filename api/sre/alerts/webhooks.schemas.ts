/** Request and response schemas of the alert webhooks beyond the senders' payloads (shared/sre/alerts/payloads.ts). */
import { z } from '../../../shared/zod.js';

export const webhookParams = z.object({ source: z.string().min(1).max(63).openapi({ description: 'alert source name (`default` always exists)' }) });
export const webhookAccepted = z
  .object({ payload_id: z.string(), source: z.string(), accepted: z.number().int() })
  .openapi('AlertWebhookAccepted', {
    description: 'the alerts are queued; the worker writes them (dedup by fingerprint) shortly after. A retry of the same body within ALERT_RETRY_WINDOW adds nothing (and, within one aligned window, answers the same payload_id)',
  });
