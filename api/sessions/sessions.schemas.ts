/** Request and response schemas of the session memory routes (also the OpenAPI reference). */
import { z, uuid, nullableTimestamp, timestamp as timestampSchema } from '../../shared/zod.js';
import { channelSchema, e164Schema, historyMessageSchema, intervalSchema, jsonObject, sessionStatuses } from '../../shared/sessions/schemas.js';

const timestamp = timestampSchema();

export const sessionIdParams = z.object({ session_id: uuid() });
export const userIdParams = z.object({ user_id: uuid() });

export const sessionSchema = z
  .object({
    session_id: uuid(),
    user_id: uuid(),
    status: z.enum(sessionStatuses),
    resume_window: z.string().openapi({ example: '24 hours' }),
    created_at: timestamp,
    last_activity: timestamp,
    closed_at: nullableTimestamp(),
  })
  .openapi('Session');

export const resolveBody = z.object({ user_id: uuid(), resume_window: intervalSchema.optional() });
export const resolveResponse = z
  .object({ session_id: uuid(), user_id: uuid(), status: z.enum(sessionStatuses), created_at: timestamp, last_activity: timestamp, resumed: z.boolean() })
  .openapi('ResolvedSession');

export const interactionSchema = z
  .object({
    interaction_id: uuid(),
    session_id: uuid(),
    channel: channelSchema,
    channel_ref: z.string().nullable(),
    status: z.enum(['active', 'closed']),
    started_at: timestamp,
    ended_at: nullableTimestamp(),
    legacy_interaction_id: uuid().nullable(),
    metadata: jsonObject,
  })
  .openapi('Interaction');

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
export const closedInteractionSchema = interactionSchema
  .extend({ session_status: z.enum(sessionStatuses), synced_messages: z.number().int() })
  .openapi('ClosedInteraction');

export const contextSchema = z
  .object({ conversation_history: z.array(historyMessageSchema), last_channel: z.string().nullable(), preferences: jsonObject, custom_data: jsonObject })
  .openapi('SessionContext');

export const publishResponse = z
  .object({
    success: z.boolean(),
    session_id: uuid(),
    message_published: z.boolean(),
    message_id: uuid(),
    sequence: z.number().int().nullable().openapi({ description: 'Position in the session stream (the SSE id); null while not yet persisted' }),
  })
  .openapi('PublishResult');

export const eventAcceptedSchema = z
  .object({ success: z.boolean(), session_id: uuid(), event_id: uuid(), event_type: z.string(), published: z.boolean(), sequence: z.number().int().nullable() })
  .openapi('EventAccepted');

export const userSchema = z
  .object({ user_id: uuid(), display_name: z.string().nullable(), phone_number: z.string(), email: z.string().nullable() })
  .openapi('User');
export const newUserBody = z.object({
  phone_number: e164Schema,
  display_name: z.string().min(1).max(255).optional(),
  email: z.email({ error: 'must be an email address' }).max(320).optional(),
});

export const consentSchema = z
  .object({
    consent_id: uuid().nullable(),
    user_id: uuid(),
    channel_type: channelSchema,
    opted_in: z.boolean(),
    opted_in_at: nullableTimestamp(),
    opted_out_at: nullableTimestamp(),
    consent_source: z.string().nullable(),
    proactive_allowed: z.boolean(),
    proactive_allowed_at: nullableTimestamp(),
    created_at: nullableTimestamp(),
    updated_at: nullableTimestamp(),
  })
  .openapi('ChannelConsent');
export const consentBody = z
  .object({
    opted_in: z.boolean().optional(),
    proactive_allowed: z.boolean().optional(),
    consent_source: z.enum(['web_form', 'voice_prompt', 'sms_reply', 'chatapp', 'api']).nullable().optional(),
  })
  .refine((b) => b.opted_in !== undefined || b.proactive_allowed !== undefined || b.consent_source !== undefined, 'must change opted_in, proactive_allowed or consent_source');
