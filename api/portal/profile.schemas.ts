/** Request schemas of the profile routes (the profile itself: shared/users/users.schemas.ts). */
import { z } from '../../shared/zod.js';
import { e164, timezoneSchema } from '../../shared/portal/portal.schemas.js';
import { notificationPreferencesSchema } from '../../shared/users/users.schemas.js';

/** PATCH /api/portal/profile: any of timezone, phone (only null, or the current number) and notification_preferences. */
export const profileUpdate = z
  .object({
    timezone: timezoneSchema,
    phone: e164.nullable().openapi({ description: 'null removes the number; a new one is proven first (POST /api/portal/profile/phone)' }),
    notification_preferences: notificationPreferencesSchema,
  })
  .partial()
  .strict();

/** POST /api/portal/profile/phone: the number to prove. */
export const phoneCodeRequest = z.object({ phone: e164.openapi({ description: 'the number to prove (E.164)' }) }).strict();
export const phoneCodeSent = z
  .object({
    status: z.literal('code_sent'),
    phone: z.string(),
    expires_at: z.string().openapi({ description: 'the code can be entered until then' }),
  })
  .openapi('PhoneCodeSent');
/** POST /api/portal/profile/phone/verify: the code that was sent. */
export const phoneCodeVerify = z.object({ code: z.string().regex(/^\d{6}$/, 'must be the 6 digits of the code') }).strict();

/** PUT /api/portal/profile/voice-pin: the PIN a caller says or keys to get their full rights on the phone. */
export const voicePinSet = z.object({ pin: z.string().regex(/^\d{4,12}$/, 'must be 4 to 12 digits').openapi({ description: 'digits only; stored as a salted hash' }) }).strict();
export const voicePinState = z.object({ voice_pin_set: z.boolean() }).openapi('VoicePinState');
