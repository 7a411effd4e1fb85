/** The portal profile (spec 002 § Self-service portal): a person's timezone, phone and notification preferences. */
import { ApiRouter } from '../routing.js';
import { getProfile, updateProfile } from '../../shared/users/users.store.js';
import { profileSchema } from '../../shared/users/profile.js';
import { actingUserNote, callerOf, portalRouter, userHeader } from './caller.js';
import { profileUpdate } from './profile.schemas.js';

export function profileRoutes(): ApiRouter {
  const tags = ['portal: profile'];
  return portalRouter()
    .route({
      method: 'get',
      path: '/api/portal/profile',
      tags,
      summary: 'My profile',
      description: `email, display_name and roles are copies from the identity provider (refreshed at each sign-in, read-only here). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader },
      responses: { 200: { description: 'The profile', schema: profileSchema } },
      handler: async (_i, ctx) => getProfile(callerOf(ctx).userId),
    })
    .route({
      method: 'patch',
      path: '/api/portal/profile',
      tags,
      summary: 'Change my timezone, phone or notification preferences',
      description: `timezone: an IANA name (Europe/Paris); phone: E.164, unique across users (the messaging channels find people by it), null removes it; notification_preferences replaces the stored object: \`{"channels": {"email": true, "sms": false}, "quiet_hours": {"enabled": true, "start": "22:00", "end": "07:00"}}\` (a missing channel is on; quiet hours are local to timezone). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, body: profileUpdate },
      responses: { 200: { description: 'The changed profile', schema: profileSchema } },
      errors: { 409: 'The phone number belongs to another account (`errors` names body.phone)' },
      handler: async ({ body }, ctx) => updateProfile(callerOf(ctx).userId, body),
    });
}
