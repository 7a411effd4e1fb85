/**
 * The session stream's routes (spec 000): publishing a message or another event into a session's
 * stream (accepted here, ordered, persisted and broadcast by shared/stream/), and the SSE stream a
 * channel reads it from (session-stream.ts).
 */
import type { Context } from 'koa';
import type { LimitTake } from '../../shared/limits.js';
import { ApiRouter } from '../routing.js';
import { config } from '../../shared/config.js';
import { clientEventSchema, messageInputSchema } from '../../shared/sessions/sessions.schemas.js';
import { getSession } from '../../shared/sessions/sessions.store.js';
import { acceptEvent, acceptMessage } from '../../shared/stream/index.js';
import { sessionSystemRouter } from '../sessions/gate.js';
import { sessionIdParams } from '../sessions/sessions.schemas.js';
import { serveSessionStream } from './session-stream.js';
import { eventAcceptedSchema, eventStreamBody, idempotencyHeaders, publishResponse, streamHeaders, streamQuery } from './stream.schemas.js';

const tags = ['sessions'];
const closed409 = 'The session is closed (`allowed_next_states` is empty)';

export function streamRoutes(): ApiRouter {
  return sessionSystemRouter()
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
        query: streamQuery,
        headers: streamHeaders,
      },
      responses: { 200: { description: 'text/event-stream', contentType: 'text/event-stream', schema: eventStreamBody } },
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
