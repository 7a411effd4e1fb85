/** Session memory routes (spec 000): resolve, sessions, interactions, context and audit. Publishing and the SSE stream are the stream's (api/stream/). */
import { ApiRouter } from '../routing.js';
import { closeSession, resolveSession } from '../../shared/sessions/resolve.js';
import { getSession, listInteractions, listSessions, sessionHistoryRows } from '../../shared/sessions/sessions.store.js';
import { getUser } from '../../shared/users/users.store.js';
import { closeInteraction, startInteraction } from '../../shared/sessions/interactions.js';
import { getContext } from '../../shared/sessions/context.js';
import { sessionSystemRouter } from './gate.js';
import {
  auditPageSchema, auditQuery, closeInteractionBody, closeSessionBody, closedInteractionSchema, contextSchema, interactionIdParams, interactionSchema,
  resolveBody, resolveResponse, sessionIdParams, sessionList, sessionListQuery, sessionSchema, sessionWithMessages, startInteractionBody,
} from './sessions.schemas.js';
import { auditPage } from '../../shared/sessions/events.store.js';

const tags = ['sessions'];
const closed409 = 'The session is closed (`allowed_next_states` is empty)';

/**
 * A user's sessions and one session, served at /api/sessions and, for the portal, at /sessions (the
 * agent API's paths in spec 002: the portal calls {AGENT_API_URL}/sessions, which defaults to this platform).
 */
function sessionReadRoutes(router: ApiRouter, base: '/api/sessions' | '/sessions'): ApiRouter {
  const alias = base === '/sessions' ? ' Same as /api/sessions (the path the portal queries, spec 002 § Queries the portal makes).' : '';
  return router
    .route({
      method: 'get',
      path: base,
      tags,
      summary: "A user's sessions, newest first",
      description: `Not in the spec's session API; the portal reads it. \`user_id\` is required (unknown user → 404); \`limit\` 1–100, default 20 (the portal asks 50). Each row has the history fields channel, message_count and summary.${alias}`,
      auth: 'key-or-sre',
      request: { query: sessionListQuery },
      responses: { 200: { description: 'Sessions', schema: sessionList } },
      errors: { 404: 'Unknown user' },
      handler: async ({ query }) => {
        await getUser(query.user_id);
        const sessions = await listSessions(query.user_id, query.limit);
        const extra = await sessionHistoryRows(sessions.map((s) => s.session_id));
        return { sessions: sessions.map(({ context: _c, updated_at: _u, ...s }) => ({ ...s, ...(extra.get(s.session_id) ?? { channel: null, message_count: 0, summary: null }) })) };
      },
    })
    .route({
      method: 'get',
      path: `${base}/{session_id}`,
      tags,
      summary: 'One session with its context fields, interactions and messages',
      description: `Not in the spec's session API; the portal reads it for one conversation.${alias}`,
      auth: 'key-or-sre',
      request: { params: sessionIdParams },
      responses: { 200: { description: 'The session', schema: sessionWithMessages } },
      handler: async ({ params }) => {
        const [{ context, updated_at: _u, ...session }, extra, interactions, history] = await Promise.all([
          getSession(params.session_id),
          sessionHistoryRows([params.session_id]),
          listInteractions(params.session_id),
          getContext(params.session_id),
        ]);
        const c = context as { last_channel?: string; preferences?: Record<string, unknown>; custom_data?: Record<string, unknown> };
        return {
          ...session,
          ...extra.get(params.session_id)!,
          context: { last_channel: c.last_channel ?? null, preferences: c.preferences ?? {}, custom_data: c.custom_data ?? {} },
          interactions,
          messages: history.conversation_history,
        };
      },
    });
}

export function sessionRoutes(): ApiRouter {
  const router = sessionSystemRouter();
  sessionReadRoutes(router, '/api/sessions');
  sessionReadRoutes(router, '/sessions');
  return router
    .route({
      method: 'post',
      path: '/api/sessions/resolve',
      tags,
      summary: 'Find or create the session of a user',
      description: [
        'No live (active, idle, resumable) session → a new active one, `resumed: false`.',
        'A live one whose last_activity is inside the window → that one, made active, `resumed: true`.',
        'A live one past the window → closed (history archived, not restored) and a new one created, `resumed: false`.',
        '`resume_window` (interval syntax: `30 minutes`, `24 hours`, `7 days`) overrides the window for this call and is stored on a session this call creates; default SERVICE_SESSION_RESUME_WINDOW.',
        'Concurrent resolves for one user are serialised and return the same session. Unknown user → 404.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: { body: resolveBody },
      responses: { 200: { description: 'The session and whether it was resumed', schema: resolveResponse } },
      handler: async ({ body }) => {
        const { session, resumed } = await resolveSession(body.user_id, body.resume_window);
        return { session_id: session.session_id, user_id: session.user_id, status: session.status, created_at: session.created_at, last_activity: session.last_activity, resumed };
      },
    })
    .route({
      method: 'get',
      path: '/api/sessions/{session_id}/audit',
      tags,
      summary: "A session's audit log",
      description: 'Not in the spec. Every audit event of the session (session_created, interaction_started, message_published, interaction_ended, history_synced, session_expired, …), oldest first, paged by `limit` (1–500, default 100) and `offset`; `total` counts them all. Unknown session → 404.',
      auth: 'key-or-sre',
      request: { params: sessionIdParams, query: auditQuery },
      responses: { 200: { description: 'A page of audit events', schema: auditPageSchema } },
      handler: async ({ params, query }) => {
        await getSession(params.session_id);
        return { ...(await auditPage(params.session_id, query.limit, query.offset)), limit: query.limit, offset: query.offset };
      },
    })
    .route({
      method: 'post',
      path: '/api/sessions/{session_id}/close',
      tags,
      summary: 'Close a session explicitly',
      description: 'The spec leaves the source states open: any live status (active, idle, resumable) may be closed; its active interactions end with it. Closing a closed session → 409. The body is optional: `{reason}` is kept in the audit log.',
      auth: 'key-or-sre',
      request: { params: sessionIdParams, body: closeSessionBody.optional() },
      responses: { 200: { description: 'The closed session', schema: sessionSchema } },
      errors: { 409: closed409 },
      handler: async ({ params, body }) => {
        const { context: _c, updated_at: _u, ...session } = await closeSession(params.session_id, body?.reason);
        return session;
      },
    })
    .route({
      method: 'post',
      path: '/api/sessions/{session_id}/interactions',
      tags,
      summary: 'Attach an interaction of a channel',
      description: 'Several interactions may be active at once. The session becomes active; CHANNEL_JOINED `{interaction_id, channel_ref}` is published and `interaction_started` audited. Closed session → 409.',
      auth: 'key-or-sre',
      request: { params: sessionIdParams, body: startInteractionBody },
      responses: { 201: { description: 'The interaction', schema: interactionSchema } },
      errors: { 409: closed409 },
      handler: async ({ params, body }) => startInteraction(params.session_id, body),
    })
    .route({
      method: 'post',
      path: '/api/sessions/interactions/{interaction_id}/close',
      tags,
      summary: 'Close an interaction, optionally syncing its final history',
      description: [
        'Response (not shown in the spec): the closed interaction, the resulting `session_status` and `synced_messages`.',
        'Closing the last active interaction makes the session idle. Interaction statuses are `active` and `closed`; closing a closed one → 409.',
        '`final_history` is the channel\'s transcript of the interaction: entries not already in the history (a published message of this interaction with the same role and content accounts for one equal entry) are appended in order as messages of the interaction\'s channel, published as MESSAGE and audited (`history_synced`). The answer waits (bounded) until they are persisted. CHANNEL_LEFT is then published.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: { params: interactionIdParams, body: closeInteractionBody.optional() },
      responses: { 200: { description: 'The closed interaction', schema: closedInteractionSchema } },
      errors: { 409: 'The interaction is already closed' },
      handler: async ({ params, body }) => closeInteraction(params.interaction_id, body?.final_history),
    })
    .route({
      method: 'get',
      path: '/api/sessions/{session_id}/context',
      tags,
      summary: 'The conversation context of a session',
      description: '`conversation_history` holds the last SERVICE_SESSION_MAX_HISTORY messages in stream order (`{role, content, channel}`); also `last_channel`, `preferences` and `custom_data` (changed by CONTEXT_UPDATE events).',
      auth: 'key-or-sre',
      request: { params: sessionIdParams },
      responses: { 200: { description: 'The context', schema: contextSchema } },
      handler: async ({ params }) => getContext(params.session_id),
    });
}
