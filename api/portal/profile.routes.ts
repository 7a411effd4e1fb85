/** The portal profile (spec 002 § Self-service portal): a person's timezone, proven phone and notification preferences. */
import { ApiRouter } from '../routing.js';
import { getProfile, updateProfile } from '../../shared/users/users.store.js';
import { profileSchema } from '../../shared/users/users.schemas.js';
import { PHONE_CODE_TEMPLATE, requestPhoneCode, verifyPhoneCode } from '../../shared/portal/phone-proof.js';
import { actingUserNote, callerOf, portalRouter } from './caller.js';
import { userHeader } from './common.schemas.js';
import { phoneCodeRequest, phoneCodeSent, phoneCodeVerify, profileUpdate, voicePinSet, voicePinState } from './profile.schemas.js';
import { setVoicePin } from '../../shared/users/voice-pin.js';

export function profileRoutes(): ApiRouter {
  const tags = ['portal: profile'];
  return portalRouter()
    .route({
      method: 'get',
      path: '/api/portal/profile',
      tags,
      summary: 'My profile',
      description: `email, display_name and roles are copies from the identity provider (refreshed at each sign-in and every AUTH_ROLES_REFRESH of a browser session, read-only here); phone is the proven number (POST /api/portal/profile/phone). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader },
      responses: { 200: { description: 'The profile', schema: profileSchema } },
      handler: async (_i, ctx) => getProfile(callerOf(ctx).userId),
    })
    .route({
      method: 'patch',
      path: '/api/portal/profile',
      tags,
      summary: 'Change my timezone or notification preferences, or remove my phone',
      description: `timezone: an IANA name (Europe/Paris); phone: only null (removes it; the messaging channels no longer know this person by it) or the profile's current number unchanged — a new number is proven with a code first (POST /api/portal/profile/phone, then …/verify), any other value is a 400 naming body.phone; notification_preferences replaces the stored object: \`{"channels": {"email": true, "sms": false}, "quiet_hours": {"enabled": true, "start": "22:00", "end": "07:00"}}\` (a missing channel is on; quiet hours are local to timezone). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, body: profileUpdate },
      responses: { 200: { description: 'The changed profile', schema: profileSchema } },
      handler: async ({ body }, ctx) => updateProfile(callerOf(ctx).userId, body),
    })
    .route({
      method: 'post',
      path: '/api/portal/profile/phone',
      tags,
      summary: 'Send a code to prove a new phone number',
      description: [
        'The messaging channels (messaging app, SMS, voice) find a person by phone number, so a number is set only once proven: this sends a 6-digit code to `phone` and answers 202; POST /api/portal/profile/phone/verify enters it. Until then the number routes nothing to this account, and the profile keeps its current number.',
        `The code goes out through the messaging app as the approved template \`${PHONE_CODE_TEMPLATE}\` (CHATAPP_TEMPLATE_SIDS ${PHONE_CODE_TEMPLATE}=HX…, its one variable the code), or as text while the number's 24-hour window is open; otherwise by SMS when SMS_FROM_NUMBER is set. Only a hash of the code is stored; it can be entered for PHONE_CODE_TTL_MINUTES (10), once. Asking again replaces the previous code.`,
        'The answer is the same for every well-formed number, whoever has it: a number of another account gets 202 too, but no code is sent to it and no code proves it (so the answers never tell which numbers are registered).',
        `At most LIMIT_PHONE_CODES_PER_HOUR (5) requests per person per hour, LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR (3) codes to one number whoever asks, and LIMIT_PHONE_CODES_TOTAL_PER_HOUR (300) over everyone: over one, 429 with Retry-After. ${actingUserNote}`,
      ].join('\n\n'),
      auth: 'key-or-person',
      request: { headers: userHeader, body: phoneCodeRequest },
      responses: { 202: { description: 'A code is on its way (whoever has the number)', schema: phoneCodeSent } },
      errors: { 429: 'Over LIMIT_PHONE_CODES_PER_HOUR, LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR or LIMIT_PHONE_CODES_TOTAL_PER_HOUR (Retry-After)' },
      handler: async ({ body }, ctx) => {
        const sent = await requestPhoneCode(callerOf(ctx).userId, body.phone);
        ctx.status = 202;
        return sent;
      },
    })
    .route({
      method: 'post',
      path: '/api/portal/profile/phone/verify',
      tags,
      summary: 'Enter the code and set the proven number',
      description: [
        "The right code within PHONE_CODE_TTL_MINUTES sets the number it was sent to on the profile (the code is used up) and answers the profile: from then on that number's messaging-app and SMS messages reach this person.",
        "The messaging-app conversation window follows the change: the previous number's 24-hour window no longer applies to this person, and the new number's opens with its first inbound message.",
        'A wrong, expired or used code, none asked for, or a number of another account: the same 400 naming body.code. At most LIMIT_PHONE_CODE_ATTEMPTS (5) codes entered per person per PHONE_CODE_TTL_MINUTES, right or wrong: over it, 429 with Retry-After.',
        actingUserNote,
      ].join('\n\n'),
      auth: 'key-or-person',
      request: { headers: userHeader, body: phoneCodeVerify },
      responses: { 200: { description: 'The profile with its proven number', schema: profileSchema } },
      errors: { 429: 'Over LIMIT_PHONE_CODE_ATTEMPTS (Retry-After)' },
      handler: async ({ body }, ctx) => verifyPhoneCode(callerOf(ctx).userId, body.code),
    })
    .route({
      method: 'put',
      path: '/api/portal/profile/voice-pin',
      tags,
      summary: 'Set my voice PIN',
      description: [
        'On the phone, caller ID alone (which can be forged) earns only the portal tool set over the caller\'s own data; the person\'s other rights (sales, SRE tools) need this PIN, said ("my PIN is 4 8 1 5") or keyed (`*4815#`) during the call. Only a salted hash is kept; setting it again replaces it.',
        `At most LIMIT_VOICE_PIN_ATTEMPTS (5) PINs per person per hour on calls, right or wrong. ${actingUserNote}`,
      ].join('\n\n'),
      auth: 'key-or-person',
      request: { headers: userHeader, body: voicePinSet },
      responses: { 200: { description: 'The PIN is set', schema: voicePinState } },
      handler: async ({ body }, ctx) => {
        await setVoicePin(callerOf(ctx).userId, body.pin);
        return { voice_pin_set: true };
      },
    })
    .route({
      method: 'delete',
      path: '/api/portal/profile/voice-pin',
      tags,
      summary: 'Remove my voice PIN',
      description: `Calls get only the portal tool set again. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader },
      responses: { 200: { description: 'No PIN is set', schema: voicePinState } },
      handler: async (_i, ctx) => {
        await setVoicePin(callerOf(ctx).userId, null);
        return { voice_pin_set: false };
      },
    });
}
