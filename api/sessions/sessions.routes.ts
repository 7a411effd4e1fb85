/** Session memory routes (spec 000): resolve, sessions, interactions, context, publishing and the SSE stream. */
import type { Context } from 'koa';
import type { LimitTake } from '../../shared/limits.js';
import { ApiRouter } from '../routing.js';
import { z, uuid } from '../../shared/zod.js';
import { config } from '../../shared/config.js';
import { channelSchema, clientEventSchema, historyMessageSchema, messageInputSchema } from '../../shared/sessions/schemas.js';
import { closeSession, resolveSession } from '../../shared/sessions/resolve.js';
import { getSession, listInteractions, listSessions, sessionHistoryRows } from '../../shared/sessions/sessions.store.js';
import { getUser } from '../../shared/users/users.store.js';
import { closeInteraction, startInteraction } from '../../shared/sessions/interactions.js';
import { acceptEvent, acceptMessage } from '../../shared/stream/index.js';
import { getContext } from '../../shared/sessions/context.js';
import { sessionSystemRouter } from './gate.js';
import { serveSessionStream } from '../stream/session-stream.js';
import {
  closeInteractionBody, closedInteractionSchema, contextSchema, eventAcceptedSchema, interactionSchema, publishResponse,
  resolveBody, resolveResponse, sessionDetail, sessionIdParams, sessionSchema, startInteractionBody, auditQuery, auditRowSchema,
} from './sessions.schemas.js';
import { auditPage } from '../../shared/sessions/events.store.js';

const tags = ['sessions'];
const closed409 = 'The session is closed (`allowed_next_states` is empty)';

const idempotencyHeaders = z.object({
  'idempotency-key': z.string().min(1).max(255).optional().openapi({ description: 'A repeat with the same key within 24 hours returns the first result and publishes nothing' }),
});

const historyFields = {
  channel: z.string().nullable().openapi({ description: 'channel of the first interaction (where the conversation started); null before any' }),
  message_count: z.number().int(),
  summary: z.string().nullable().openapi({ description: 'written when the session goes idle or closes: by the model when one is configured, else the first user message cut short; null before' }),
};
const sessionListRow = sessionSchema.extend(historyFields).openapi('SessionListRow');
const sessionWithMessages = sessionDetail
  .extend({ ...historyFields, messages: z.array(historyMessageSchema).openapi({ description: 'the conversation history (newest SERVICE_MAX_HISTORY messages), oldest first' }) })
  .openapi('SessionDetailWithMessages');

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
      request: { query: z.object({ user_id: uuid(), limit: z.coerce.number().int().min(1).max(100).default(20) }) },
      responses: { 200: { description: 'Sessions', schema: z.object({ sessions: z.array(sessionListRow) }) } },
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
      responses: { 200: { description: 'A page of audit events', schema: z.object({ items: z.array(auditRowSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) } },
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
      request: { params: sessionIdParams, body: z.object({ reason: z.string().max(500).optional() }).optional() },
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
      request: { params: z.object({ interaction_id: uuid() }), body: closeInteractionBody.optional() },
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
    })
    .route({
      method: 'post',
      path: '/api/sessions/{session_id}/messages',
      tags,
      summary: 'Publish a message to the session',
      description: [
        'The message is validated, given its id and enqueued; a worker appends it to the history (trimmed to SERVICE_SESSION_MAX_HISTORY), refreshes last_activity, publishes MESSAGE on `session:{session_id}:events` and writes the `message_published` audit row.',
        '200 once persisted and published, with `message_id` and `sequence` (its position in the session stream, the SSE id). If that takes longer than SESSION_PUBLISH_WAIT_MS the answer is 202 with `message_published: false`; the message is still persisted and delivered.',
        'Order: messages of a session keep the order in which they were accepted. `interaction_id` must name an interaction of this session (else 404). `content` is at most 32,000 characters.',
        '`Idempotency-Key`: a repeat within 24 hours publishes nothing and answers with the first message (the body of the repeat is not compared).',
        'MESSAGE data: `{role, content, interaction_id, metadata, message_id, sequence}`.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: { params: sessionIdParams, body: messageInputSchema, headers: idempotencyHeaders },
      responses: {
        200: { description: 'Persisted and published', schema: publishResponse },
        202: { description: 'Accepted; persisting and publishing still under way', schema: publishResponse },
      },
      errors: { 409: closed409, 429: 'Over LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE for this session or LIMIT_PUBLISHES_PER_KEY_PER_MINUTE for this caller (Retry-After)' },
      handler: async ({ params, body, headers }, ctx) => {
        const result = await acceptMessage(params.session_id, body, { idempotencyKey: headers['idempotency-key'], waitMs: config().sessions.publishWaitMs, limits: publishLimits(params.session_id, ctx) });
        ctx.status = result.message_published ? 200 : 202;
        if (result.replayed) ctx.set('Idempotent-Replayed', 'true');
        return { success: true, session_id: result.session_id, message_published: result.message_published, message_id: result.message_id, sequence: result.sequence };
      },
    })
    .route({
      method: 'post',
      path: '/api/sessions/{session_id}/events',
      tags,
      summary: 'Publish a non-message event (TYPING, TOOL_CALL, TOOL_RESULT, CONTEXT_UPDATE)',
      description: [
        'Not in the spec as an endpoint; the kinds and data fields are the spec\'s. Body `{event_type, channel, data}`:',
        '`TYPING {is_typing}`, `TOOL_CALL {tool_name, arguments}`, `TOOL_RESULT {tool_name, result}`, `CONTEXT_UPDATE {preferences?, custom_data?}` (merged shallowly into the session context).',
        'MESSAGE is published through POST /messages; CHANNEL_JOINED / CHANNEL_LEFT only by the interaction endpoints. Events go through the same ordered stream and audit log (lower-case type). 200 when published within SESSION_PUBLISH_WAIT_MS, else 202.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: { params: sessionIdParams, body: clientEventSchema },
      responses: {
        200: { description: 'Published', schema: eventAcceptedSchema },
        202: { description: 'Accepted, publishing under way', schema: eventAcceptedSchema },
      },
      errors: { 409: closed409, 429: 'Over LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE for this session or LIMIT_PUBLISHES_PER_KEY_PER_MINUTE for this caller (Retry-After)' },
      handler: async ({ params, body }, ctx) => {
        const accepted = await acceptEvent(params.session_id, body, { waitMs: config().sessions.publishWaitMs, limits: publishLimits(params.session_id, ctx) });
        ctx.status = accepted.published ? 200 : 202;
        return { success: true, ...accepted };
      },
    })
    .route({
      method: 'get',
      path: '/api/sessions/{session_id}/events',
      tags,
      summary: 'Server-Sent Events stream of the session',
      description: [
        'Each event: `id: <sequence>` and one `data:` line holding the envelope `{event_type, session_id, channel, data}`. Events whose channel equals `channel` are not delivered.',
        'A keep-alive comment is sent every SESSION_SSE_KEEPALIVE_SECONDS (15). `retry: 1000` is suggested; clients back off doubling up to 30 s.',
        'Resuming: send `Last-Event-ID` (or `last_event_id` in the query): every event after it is replayed from Postgres, then the live events follow with no gap and no duplicate. Without it only live events are sent.',
        'Headers: `Cache-Control: no-cache`, `X-Accel-Buffering: no`, never compressed. The API key may be sent as `Authorization: Bearer` or `X-API-Key`.',
        'A subscriber more than 1 MiB behind is disconnected; it reconnects with Last-Event-ID and replays.',
        'When the session closes (POST close, or expiry) the interactions it ended are announced with CHANNEL_LEFT, then the final event `CONTEXT_UPDATE` with `data: {session_status: "closed", reason}` is sent and the stream ends (a subscriber on the channel the final event carries, the session\'s last channel, gets only its `id:` line, which moves its Last-Event-ID without an event, and its stream ends too). Opening the stream of a closed session without Last-Event-ID, or with one at or past its final event, is a 409 (which also stops an EventSource from reconnecting); with an earlier one, the replay is sent and the stream ends.',
        'Open streams are capped per API process (SSE_MAX_STREAMS, default 10,000), per API key within a process (SSE_MAX_STREAMS_PER_KEY, default 2,000), and per person over all API processes (LIMIT_STREAMS_PER_PERSON, default 20): the streams of one user\'s sessions, whichever key opened them, counted with that person\'s own portal chat streams. An API key acts for no person of its own, so the person is the session\'s user. Over a cap the answer is 429 with `Retry-After` (seconds) and nothing is streamed.',
      ].join('\n\n'),
      auth: 'key-or-sre',
      request: {
        params: sessionIdParams,
        query: z.object({ channel: channelSchema, last_event_id: z.coerce.number().int().min(0).optional() }),
        headers: z.object({ 'last-event-id': z.string().regex(/^\d+$/, 'must be a sequence number').optional() }),
      },
      responses: { 200: { description: 'text/event-stream', contentType: 'text/event-stream', schema: z.string() } },
      errors: { 429: 'Too many open streams in this process, for this API key, or on this session\'s person (LIMIT_STREAMS_PER_PERSON); Retry-After says when to try again' },
      handler: async ({ params, query, headers }, ctx) => {
        await serveSessionStream(ctx, await getSession(params.session_id), query.channel, headers['last-event-id'], query.last_event_id);
        return undefined;
      },
    });
}

/** Publishes per session and per caller (key or person) per minute, over all API processes: taken with the request's lane group. */
function publishLimits(sessionId: string, ctx: Context): LimitTake[] {
  const caller = (ctx.state.apiKeyId as string | undefined) ?? `person:${(ctx.state.person as { subject?: string } | undefined)?.subject ?? ''}`;
  return [
    { name: 'sessionPublishes', key: sessionId },
    { name: 'keyPublishes', key: caller },
  ];
}
