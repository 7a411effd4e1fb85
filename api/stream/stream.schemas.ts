/** Request and response schemas of the session stream's routes (also the OpenAPI reference). */
import { z } from '../../shared/zod.js';
import { channelSchema, eventAcceptedSchema, publishResponse } from '../../shared/sessions/sessions.schemas.js';

export { eventAcceptedSchema, publishResponse };

export const idempotencyHeaders = z.object({
  'idempotency-key': z.string().min(1).max(255).optional().openapi({ description: 'A repeat with the same key within 24 hours returns the first result and publishes nothing' }),
});

export const streamQuery = z.object({ channel: channelSchema, last_event_id: z.coerce.number().int().min(0).optional() });
export const streamHeaders = z.object({ 'last-event-id': z.string().regex(/^\d+$/, 'must be a sequence number').optional() });
/** The body of an SSE response, as OpenAPI shows it. */
export const eventStreamBody = z.string();
