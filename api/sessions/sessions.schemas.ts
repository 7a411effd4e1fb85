/** Request and response schemas of the session memory routes (also the OpenAPI reference). */
import { z, uuid } from '../../shared/zod.js';
import {
  channelSchema, closedInteractionSchema, contextSchema, eventAcceptedSchema, historyMessageSchema, interactionSchema, intervalSchema, jsonObject, publishResponse, sessionSchema, sessionStatuses, timestamp,
} from '../../shared/sessions/schemas.js';

export { closedInteractionSchema, contextSchema, eventAcceptedSchema, interactionSchema, publishResponse, sessionSchema };

export const sessionIdParams = z.object({ session_id: uuid() });

export const resolveBody = z.object({ user_id: uuid(), resume_window: intervalSchema.optional() });
export const resolveResponse = z
  .object({ session_id: uuid(), user_id: uuid(), status: z.enum(sessionStatuses), created_at: timestamp, last_activity: timestamp, resumed: z.boolean() })
  .openapi('ResolvedSession');

export const sessionDetail = sessionSchema
  .extend({ context: z.object({ last_channel: z.string().nullable(), preferences: jsonObject, custom_data: jsonObject }), interactions: z.array(interactionSchema) })
  .openapi('SessionDetail');

export const startInteractionBody = z.object({
  channel: channelSchema,
  channel_ref: z.string().max(255).optional(),
  metadata: jsonObject.optional(),
  legacy_interaction_id: uuid().optional(),
});

export const closeInteractionBody = z.object({ final_history: z.array(historyMessageSchema).max(500).optional() });

export const auditRowSchema = z
  .object({ event_id: uuid(), session_id: uuid(), interaction_id: uuid().nullable(), event_type: z.string(), payload: z.record(z.string(), z.unknown()), sequence: z.number().int().nullable(), timestamp })
  .openapi('SessionAuditEvent');
export const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
