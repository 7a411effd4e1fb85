/** Request and response schemas of the session memory routes (also the OpenAPI reference). */
import { z, uuid } from '../../shared/zod.js';
import {
  channelSchema, closedInteractionSchema, consentSchema, contextSchema, e164Schema, eventAcceptedSchema, historyMessageSchema, interactionSchema, intervalSchema, jsonObject, publishResponse, sessionSchema, sessionStatuses, timestamp,
} from '../../shared/sessions/schemas.js';

export { closedInteractionSchema, consentSchema, contextSchema, eventAcceptedSchema, interactionSchema, publishResponse, sessionSchema };

export const sessionIdParams = z.object({ session_id: uuid() });
export const userIdParams = z.object({ user_id: uuid() });

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

export const userSchema = z
  .object({ user_id: uuid(), display_name: z.string().nullable(), phone_number: z.string().nullable().openapi({ description: "null for a person who signed in to the portal without giving one" }), email: z.string().nullable() })
  .openapi('User');
export const newUserBody = z.object({
  phone_number: e164Schema,
  display_name: z.string().min(1).max(255).optional(),
  email: z.email({ error: 'must be an email address' }).max(320).optional(),
});

export const consentBody = z
  .object({
    opted_in: z.boolean().optional(),
    proactive_allowed: z.boolean().optional(),
    consent_source: z.enum(['web_form', 'voice_prompt', 'sms_reply', 'chatapp', 'api']).nullable().optional(),
  })
  .refine((b) => b.opted_in !== undefined || b.proactive_allowed !== undefined || b.consent_source !== undefined, 'must change opted_in, proactive_allowed or consent_source');
