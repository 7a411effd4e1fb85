/**
 * The users' records: a person's portal profile (the provider's copies and what they edit
 * themselves: timezone, phone, notification preferences) and their consent per channel type.
 */
import { z, uuid } from '../zod.js';
import { channelSchema, timestamp } from '../sessions/sessions.schemas.js';

const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be HH:MM (24-hour)');
export const notificationChannels = ['email', 'sms', 'chatapp', 'push'] as const;

/**
 * notification_preferences: per channel on/off, and quiet hours (local to the profile's timezone)
 * during which nothing is sent. Missing channels count as on.
 */
export const notificationPreferencesSchema = z
  .object({
    channels: z.partialRecord(z.enum(notificationChannels), z.boolean()).default({}).openapi({ description: 'per channel on (true) or off (false); a missing channel is on' }),
    quiet_hours: z
      .object({ enabled: z.boolean(), start: hhmm, end: hhmm })
      .nullable()
      .default(null)
      .openapi({ description: 'no notifications between start and end (local time of `timezone`; end before start spans midnight)' }),
  })
  .strict()
  .openapi('NotificationPreferences');
export type NotificationPreferences = z.output<typeof notificationPreferencesSchema>;

export const profileSchema = z
  .object({
    user_id: z.string(),
    email: z.string().nullable().openapi({ description: 'read-only: from the identity provider, refreshed at each sign-in and every AUTH_ROLES_REFRESH' }),
    display_name: z.string().nullable().openapi({ description: 'read-only: from the identity provider' }),
    roles: z.array(z.string()).openapi({ description: 'read-only: from the identity provider' }),
    timezone: z.string(),
    phone: z.string().nullable().openapi({ description: 'E.164; the proven number the messaging channels know this person by (unique; set with POST /api/portal/profile/phone and …/verify)' }),
    notification_preferences: notificationPreferencesSchema,
  })
  .openapi('Profile');
export type Profile = z.infer<typeof profileSchema>;

/** A user's consent on one channel type (consent_id null: never recorded, the defaults). */
export const consentSchema = z
  .object({
    consent_id: uuid().nullable(),
    user_id: uuid(),
    channel_type: channelSchema,
    opted_in: z.boolean(),
    opted_in_at: timestamp.nullable(),
    opted_out_at: timestamp.nullable(),
    consent_source: z.string().nullable(),
    proactive_allowed: z.boolean(),
    proactive_allowed_at: timestamp.nullable(),
    created_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
  })
  .openapi('ChannelConsent');
export type Consent = z.output<typeof consentSchema>;
