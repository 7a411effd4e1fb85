/** Request and response schemas of the users routes (the records themselves: shared/users/users.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { channelSchema, e164Schema, timestamp } from '../../shared/sessions/sessions.schemas.js';
import { consentSchema } from '../../shared/users/users.schemas.js';

export { consentSchema };

export const userIdParams = z.object({ user_id: uuid() });

export const userSchema = z
  .object({ user_id: uuid(), display_name: z.string().nullable(), phone_number: z.string().nullable().openapi({ description: "null for a person who signed in to the portal without giving one" }), email: z.string().nullable() })
  .openapi('User');
export const newUserBody = z.object({
  phone_number: e164Schema,
  display_name: z.string().min(1).max(255).optional(),
  email: z.email({ error: 'must be an email address' }).max(320).optional(),
});

export const userPatch = z
  .object({
    phone_number: e164Schema.optional(),
    display_name: z.string().min(1).max(255).nullable().optional(),
    email: z.email({ error: 'must be an email address' }).max(320).nullable().optional(),
  })
  .refine((b) => b.phone_number !== undefined || b.display_name !== undefined || b.email !== undefined, 'must change phone_number, display_name or email');
export const erasureSchema = z
  .object({
    erasure_id: uuid(),
    subject_hash: z.string().openapi({ description: 'SHA-256 (hex) of the erased user id; no other trace of the person' }),
    requested_by: z.string(),
    erased: z.record(z.string(), z.number().int()).openapi({ description: 'rows erased per table' }),
    erased_at: timestamp,
  })
  .openapi('UserErasure');

export const consentBody = z
  .object({
    opted_in: z.boolean().optional(),
    proactive_allowed: z.boolean().optional(),
    consent_source: z.enum(['web_form', 'voice_prompt', 'sms_reply', 'chatapp', 'api']).nullable().optional(),
  })
  .refine((b) => b.opted_in !== undefined || b.proactive_allowed !== undefined || b.consent_source !== undefined, 'must change opted_in, proactive_allowed or consent_source');

export const phoneParams = z.object({ phone: e164Schema });
export const consentParams = userIdParams.extend({ channel_type: channelSchema });
export const consentList = z.object({ consents: z.array(consentSchema) });
export const erasureQuery = z.object({ by: z.string().min(1).max(200).default('api').openapi({ description: 'who asks for the erasure' }) });
