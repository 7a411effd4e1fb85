/** Request and response schemas of the session memory routes (also the OpenAPI reference). */
import { z, uuid } from '../../shared/zod.js';
import {
  channelSchema, closedInteractionSchema, contextSchema, historyMessageSchema, interactionSchema, intervalSchema, jsonObject, sessionSchema, sessionStatuses, timestamp,
} from '../../shared/sessions/sessions.schemas.js';

export { closedInteractionSchema, contextSchema, interactionSchema, sessionSchema };

export const sessionIdParams = z.object({ session_id: uuid() });
export const interactionIdParams = z.object({ interaction_id: uuid() });

export const resolveBody = z.object({ user_id: uuid(), resume_window: intervalSchema.optional() });
export const resolveResponse = z
  .object({ session_id: uuid(), user_id: uuid(), status: z.enum(sessionStatuses), created_at: timestamp, last_activity: timestamp, resumed: z.boolean() })
  .openapi('ResolvedSession');

export const sessionDetail = sessionSchema
  .extend({ context: z.object({ last_channel: z.string().nullable(), preferences: jsonObject, custom_data: jsonObject }), interactions: z.array(interactionSchema) })
  .openapi('SessionDetail');

export const sessionListQuery = z.object({ user_id: uuid(), limit: z.coerce.number().int().min(1).max(100).default(20) });
const historyFields = {
  channel: z.string().nullable().openapi({ description: 'channel of the first interaction (where the conversation started); null before any' }),
  message_count: z.number().int(),
  summary: z.string().nullable().openapi({ description: 'written when the session goes idle or closes: by the model when one is configured, else the first user message cut short; null before' }),
};
const sessionListRow = sessionSchema.extend(historyFields).openapi('SessionListRow');
export const sessionList = z.object({ sessions: z.array(sessionListRow) });
export const sessionWithMessages = sessionDetail
  .extend({ ...historyFields, messages: z.array(historyMessageSchema).openapi({ description: 'the conversation history (newest SERVICE_MAX_HISTORY messages), oldest first' }) })
  .openapi('SessionDetailWithMessages');

export const closeSessionBody = z.object({ reason: z.string().max(500).optional() });

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
export const auditPageSchema = z.object({ items: z.array(auditRowSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
export const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
