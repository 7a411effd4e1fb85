/**
 * The portal's web chat (spec 000 § web consumer) for the signed-in person: the same exchange as
 * POST /api/chat, acting for the caller instead of a `user_id` in the body, and the SSE stream of
 * the caller's own session on channel `chat`, so messages from the other channels arrive live.
 */
import { NotFoundError } from '../../shared/errors.js';
import { getSession, listSessions } from '../../shared/sessions/sessions.store.js';
import { config } from '../../shared/config.js';
import { lastMessages, toHistory } from '../../shared/sessions/messages.store.js';
import { webChat, webChatResponseSchema } from '../../shared/channels/webchat.js';
import { WEB_CHANNEL } from '../../shared/agent/session-turn.js';
import { serveSessionStream } from '../stream/session-stream.js';
import { sessionSystemRouter } from '../sessions/gate.js';
import { actingUserNote, portalCaller } from './caller.js';
import { userHeader } from './common.schemas.js';
import { chatRequest, chatStreamHeaders, chatStreamParams, chatStreamQuery, portalChat, sessionEventEnvelope } from './chat.schemas.js';

const tags = ['portal: chat'];

/** Behind the session-system gate, as POST /api/chat and the session stream are. */
export function portalChatRoutes() {
  return sessionSystemRouter()
    .route({
      method: 'get',
      path: '/api/portal/chat',
      tags,
      summary: 'My live conversation',
      description: `The caller's live session (not closed) and its conversation history (\`{message_id, role, content, channel}\`, oldest first, the last SERVICE_SESSION_MAX_HISTORY as in the session context); \`session_id\` null when there is none yet (the first message starts one). Nothing is created. \`message_id\` is the id the stream's MESSAGE events and POST /api/portal/chat (\`user_message_id\`, \`reply_message_id\`) name, so a screen tells two messages of the same text apart and shows a live one once. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader },
      responses: { 200: { description: 'The conversation', schema: portalChat } },
      handler: async (_i, ctx) => {
        const caller = await portalCaller(ctx);
        const [latest] = await listSessions(caller.userId, 1);
        if (!latest || latest.status === 'closed') return { session_id: null, messages: [] };
        const messages = await lastMessages(latest.session_id, config().sessions.maxHistory);
        return { session_id: latest.session_id, messages: messages.map((m) => ({ message_id: m.message_id, ...toHistory(m) })) };
      },
    })
    .route({
      method: 'post',
      path: '/api/portal/chat',
      tags,
      summary: 'Send a chat message, get the assistant reply',
      description: `POST /api/chat for the caller (the body has no \`user_id\`): the message is published at once on channel \`${WEB_CHANNEL}\`, the agent answers in a worker; 200 with the reply, or 202 \`pending\` when it was not ready in time (it then arrives in GET /api/portal/chat). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, body: chatRequest },
      responses: {
        200: { description: 'Answered', schema: webChatResponseSchema },
        202: { description: 'The reply was not ready in time (status pending)', schema: webChatResponseSchema },
      },
      errors: { 404: 'interaction_id is not of the caller\'s session', 409: 'The interaction is closed', 429: 'The caller is over LIMIT_AGENT_TURNS_PER_MINUTE (Retry-After); nothing is published' },
      handler: async ({ body }, ctx) => {
        const caller = await portalCaller(ctx);
        const result = await webChat({ ...body, user_id: caller.userId });
        ctx.status = result.status === 'answered' ? 200 : 202;
        return result;
      },
    })
    .route({
      method: 'get',
      path: '/api/portal/chat/{session_id}/events',
      tags,
      summary: 'Server-Sent Events of my session, from the other channels',
      description: `GET /api/sessions/{session_id}/events subscribed as channel \`${WEB_CHANNEL}\` (the chat's own events are not sent back), for a session of the caller; another person's session answers 404. Resume with Last-Event-ID. A closed session is a 409. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: chatStreamHeaders, params: chatStreamParams, query: chatStreamQuery },
      responses: { 200: { description: 'the event stream', contentType: 'text/event-stream', schema: sessionEventEnvelope } },
      errors: { 409: 'The session is closed', 429: 'Too many open streams: this process, or this person over all processes (LIMIT_STREAMS_PER_PERSON, which counts the streams of the person\'s sessions opened with an API key too); Retry-After says when to try again' },
      handler: async ({ params, query, headers }, ctx) => {
        const caller = await portalCaller(ctx);
        const session = await getSession(params.session_id).catch(() => undefined);
        if (!session || session.user_id !== caller.userId) throw new NotFoundError(`No session ${params.session_id}.`);
        await serveSessionStream(ctx, session, WEB_CHANNEL, headers['last-event-id'], query.last_event_id);
        return undefined;
      },
    });
}
