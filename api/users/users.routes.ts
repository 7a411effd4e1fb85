/** Users (lookup records) and their channel consents. */
import { ApiRouter } from '../routing.js';
import { NotFoundError } from '../../shared/errors.js';
import { createUser, findUserByPhone, getUser, updateUser, type User } from '../../shared/users/users.store.js';
import { eraseUser } from '../../shared/users/erase.js';
import { getConsent, listConsents, setConsent } from '../../shared/users/consents.store.js';
import { sessionSystemRouter } from '../sessions/gate.js';
import { consentBody, consentList, consentParams, consentSchema, erasureQuery, erasureSchema, newUserBody, phoneParams, userIdParams, userPatch, userSchema } from './users.schemas.js';

const tags = ['users'];
const view = ({ user_id, display_name, phone_number, email }: User) => ({ user_id, display_name, phone_number, email });

export function userRoutes(): ApiRouter {
  const router = sessionSystemRouter();
  return router
    .route({
      method: 'post',
      path: '/api/users',
      tags,
      summary: 'Create a user',
      description: 'Not in the spec as an endpoint. `phone_number` must be E.164 and unique: a taken number → 409 with the existing `user_id`. An `email` another user has (any case) → 409 naming body.email: the email channel finds people by address, so each has one holder.',
      auth: 'key-or-sre',
      request: { body: newUserBody },
      responses: { 201: { description: 'The user', schema: userSchema } },
      errors: { 409: 'The phone number or the email belongs to another user' },
      handler: async ({ body }) => view(await createUser(body)),
    })
    .route({
      method: 'get',
      path: '/api/users/by-phone/{phone}',
      tags,
      summary: 'Find a user by E.164 phone number',
      description: 'The `+` may be sent literally or as `%2B`. Not E.164 → 400; unknown → 404.',
      auth: 'key-or-sre',
      request: { params: phoneParams },
      responses: { 200: { description: 'The user', schema: userSchema } },
      handler: async ({ params }) => {
        const user = await findUserByPhone(params.phone);
        if (!user) throw new NotFoundError(`No user with phone number ${params.phone}.`);
        return view(user);
      },
    })
    .route({
      method: 'get',
      path: '/api/users/{user_id}',
      tags,
      summary: 'One user',
      auth: 'key-or-sre',
      request: { params: userIdParams },
      responses: { 200: { description: 'The user', schema: userSchema } },
      handler: async ({ params }) => view(await getUser(params.user_id)),
    })
    .route({
      method: 'patch',
      path: '/api/users/{user_id}',
      tags,
      summary: 'Change a user',
      description: 'Not in the spec. `phone_number` must be E.164 and unique (a number another user has → 409 with that `user_id`): the integration holding the API key vouches for it (people prove theirs in the portal with a code: POST /api/portal/profile/phone). The messaging-app window follows the change: the old number\'s 24-hour window no longer applies to the user, the new number\'s opens with its first inbound message. `null` clears `display_name` or `email`; an `email` another user has (any case) → 409 naming body.email.',
      auth: 'key-or-sre',
      request: { params: userIdParams, body: userPatch },
      responses: { 200: { description: 'The user', schema: userSchema } },
      errors: { 409: 'The phone number or the email belongs to another user' },
      handler: async ({ params, body }) => view(await updateUser(params.user_id, body)),
    })
    .route({
      method: 'delete',
      path: '/api/users/{user_id}',
      tags,
      summary: 'Erase a user and all their data',
      description: [
        'Not in the spec. In one transaction: the user, their sessions with interactions, messages and audit events, their channel consents,',
        'their messaging-app window records and messages (also those matched by phone number). What stays is one audit row without personal',
        'data: the SHA-256 of the user id, who asked (`by`, default `api`), when, and the rows erased per table. The answer is that row.',
        'Open streams of the erased sessions are not notified (the rows are gone).',
      ].join(' '),
      auth: 'key-or-sre',
      request: { params: userIdParams, query: erasureQuery },
      responses: { 200: { description: 'The erasure record', schema: erasureSchema } },
      handler: ({ params, query }) => eraseUser(params.user_id, query.by),
    })
    .route({
      method: 'get',
      path: '/api/users/{user_id}/consents',
      tags,
      summary: "A user's recorded channel consents",
      description: 'Not in the spec. Channel types without a record are absent (their defaults: not opted in, no proactive messages).',
      auth: 'key-or-sre',
      request: { params: userIdParams },
      responses: { 200: { description: 'Consents', schema: consentList } },
      handler: async ({ params }) => ({ consents: await listConsents(params.user_id) }),
    })
    .route({
      method: 'get',
      path: '/api/users/{user_id}/consents/{channel_type}',
      tags,
      summary: "A user's consent on one channel type",
      description: 'Not in the spec. Never recorded → 200 with the defaults (`consent_id: null`, `opted_in: false`, `proactive_allowed: false`).',
      auth: 'key-or-sre',
      request: { params: consentParams },
      responses: { 200: { description: 'The consent', schema: consentSchema } },
      handler: async ({ params }) => getConsent(params.user_id, params.channel_type),
    })
    .route({
      method: 'put',
      path: '/api/users/{user_id}/consents/{channel_type}',
      tags,
      summary: "Change a user's consent on one channel type",
      description: [
        'Not in the spec. Upsert of the (user, channel type) record with any of `opted_in`, `proactive_allowed`, `consent_source` (web_form, voice_prompt, sms_reply, chatapp, api).',
        'Opting in sets `opted_in_at`, opting out `opted_out_at` and withdraws proactive permission; `proactive_allowed: true` needs an opt-in (else 400) and sets `proactive_allowed_at`.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: { params: consentParams, body: consentBody },
      responses: { 200: { description: 'The consent', schema: consentSchema } },
      handler: async ({ params, body }) => setConsent(params.user_id, params.channel_type, body),
    });
}
