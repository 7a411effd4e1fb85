/** Request schemas of the profile routes (the profile itself: shared/users/profile.ts). */
import { z } from '../../shared/zod.js';
import { e164, timezoneSchema } from '../../shared/portal/model.js';
import { notificationPreferencesSchema } from '../../shared/users/profile.js';

/** PATCH /api/portal/profile: any of timezone, phone (null removes it) and notification_preferences. */
export const profileUpdate = z
  .object({ timezone: timezoneSchema, phone: e164.nullable(), notification_preferences: notificationPreferencesSchema })
  .partial()
  .strict();
