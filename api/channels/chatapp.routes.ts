/** The messaging-app channel (inbound webhook, proactive templates, session messages, records) and the web chat. */
import { ApiRouter } from '../routing.js';
import { sessionSystemOff, sessionSystemRouter } from '../sessions/gate.js';
import { NotFoundError } from '../../shared/errors.js';
import { templateNames, templates } from '../../shared/channels/chatapp/templates.js';
import { MAX_BUTTONS, MAX_LIST_ITEMS, chatappMessageSchema, sessionMessageSchema } from '../../shared/channels/chatapp/chatapp.schemas.js';
import { inboundParams, messageList, messageParams, messageQuery, statusParams, templateSendSchema } from './chatapp.schemas.js';
import { twimlSchema } from './channels.schemas.js';
import { formParams } from './form.js';
import { acceptSessionMessage, acceptTemplateSend } from '../../shared/channels/chatapp/outbound.js';
import { acceptInbound, acceptStatusCallback, parseInbound } from '../../shared/channels/chatapp/inbound.js';
import { signedStatusUrl, signedUrl, verifySignature } from '../../shared/channels/twilio-signature.js';
import { getMessage, listMessages, type StoredMessage } from '../../shared/channels/chatapp/messages.store.js';
import { WEB_CHAT_WAIT_MS, webChat, webChatRequestSchema, webChatResponseSchema } from '../../shared/channels/webchat.js';

const emptyTwiml = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

const publicMessage = ({ payload: _payload, ...message }: StoredMessage) => message;

const templateTable = templateNames.map((n) => `| ${n} | ${templates[n].variables.join(', ')} |`).join('\n');

/** The messaging-app channel and the web chat belong to the session system: its feature flag gates them too. */
export function chatappRoutes(): ApiRouter {
  const router = sessionSystemRouter();
  return router
    .route({
      method: 'post',
      path: '/chatapp/webhook',
      tags: ['chatapp'],
      summary: 'Inbound messaging-app webhook (Twilio WhatsApp)',
      description: [
        'Twilio calls this with form-encoded parameters (MessageSid, AccountSid, From `whatsapp:+E164`, To, Body, NumMedia, MediaUrl0…, ProfileName, ButtonText, ButtonPayload, WaId; others tolerated).',
        '',
        '**Signature** (scheme not shown in the spec; decided): `X-Twilio-Signature`, HMAC-SHA1 keyed by TWILIO_AUTH_TOKEN (the one Twilio account of every Twilio channel) over the URL Twilio called (CHATAPP_PUBLIC_URL, else rebuilt from X-Forwarded-Proto / X-Forwarded-Host) followed by the sorted parameters. Missing → 400, wrong → 403; nothing is stored either way.',
        '',
        'The message is recorded once per MessageSid (a repeated delivery answers 200 and is not processed again) and queued; the answer comes at once with empty TwiML. A worker then, in the spec\'s order: finds the user by phone (an unknown number gets a polite reply, recorded), extends the 24-hour window, resolves the session, runs the agent, publishes the user message and the reply on channel `chatapp` with metadata {message_sid, phone}, and sends the reply through the REST API. A message that is only an opt-out keyword (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE; any case, punctuation ignored) opts the user out of the chatapp channel (consent `opted_in: false`, source `chatapp`; proactive sends then get 403 `missing_consent`), START/YES/UNSTOP/OPTIN opts back in (proactive permission must be given again); either is answered with the provider\'s standard confirmation and goes to no agent.',
      ].join('\n'),
      auth: 'public',
      request: {
        body: inboundParams,
        bodyType: 'application/x-www-form-urlencoded',
      },
      responses: { 200: { description: 'Accepted (or a repeated delivery); empty TwiML', schema: twimlSchema, contentType: 'text/xml' } },
      errors: { 400: 'X-Twilio-Signature missing, or MessageSid / From missing or malformed', 403: 'X-Twilio-Signature does not match', 503: `TWILIO_AUTH_TOKEN not configured, or ${sessionSystemOff}` },
      handler: async (_input, ctx) => {
        const params = formParams(ctx);
        verifySignature(ctx.get('X-Twilio-Signature') || undefined, signedUrl(ctx), params);
        const { duplicate } = await acceptInbound(parseInbound(params));
        ctx.set('X-Chatapp-Duplicate', String(duplicate));
        ctx.type = 'text/xml';
        return emptyTwiml;
      },
    })
    .route({
      method: 'post',
      path: '/chatapp/status',
      tags: ['chatapp'],
      summary: 'Delivery status callback of sent messages (Twilio StatusCallback)',
      description: [
        'Not in the spec; decided. When CHATAPP_PUBLIC_URL is set, every send asks the provider to call this URL (beside the webhook) with MessageSid and MessageStatus (queued, sent, delivered, read, failed, undelivered; ErrorCode on failures).',
        'Verified like the webhook (X-Twilio-Signature: missing → 400, wrong → 403). The status is recorded as `provider_status` of the message (and ErrorCode in `error`); a status older than the recorded one (callbacks arrive out of order) is ignored. Answers 204.',
      ].join(' '),
      auth: 'public',
      request: {
        body: statusParams,
        bodyType: 'application/x-www-form-urlencoded',
      },
      responses: { 204: { description: 'Recorded (or ignored as older than the recorded status, or of an unknown message)' } },
      errors: { 400: 'X-Twilio-Signature missing, or MessageSid / MessageStatus missing', 403: 'X-Twilio-Signature does not match', 503: `TWILIO_AUTH_TOKEN not configured, or ${sessionSystemOff}` },
      handler: async (_input, ctx) => {
        const params = formParams(ctx);
        verifySignature(ctx.get('X-Twilio-Signature') || undefined, signedStatusUrl(ctx), params);
        await acceptStatusCallback(params);
        ctx.status = 204;
      },
    })
    .route({
      method: 'post',
      path: '/api/chatapp/send',
      tags: ['chatapp'],
      summary: 'Send a proactive template message',
      description: [
        'Templates and their variables (every variable required, none other accepted):',
        '',
        '| template_name | variables |',
        '|---|---|',
        templateTable,
        '',
        "Sent only when the user's chatapp consent has `opted_in` and `proactive_allowed`; otherwise 403 naming the missing consent in `missing_consent`. Templates may be sent outside the 24-hour window only with an approved Content SID (CHATAPP_TEMPLATE_SIDS): a template without one would go out as free text, which the provider refuses outside the window, so it is a 409 with `rule: approved_template_outside_window`, `missing_setting: CHATAPP_TEMPLATE_SIDS` and `template_name` (inside the window it is sent as its rendered text). The send job checks again, as the window may close while the message waits.",
        '',
        '**Response** (not shown in the spec; decided): 202 with the message record, status `queued`. A worker sends it with retries; read the outcome (status `sent` with `provider_message_id`, or `failed` with `error`) from GET /api/chatapp/messages/{message_id}. An approved Content SID from CHATAPP_TEMPLATE_SIDS is used when configured, else the rendered text.',
      ].join('\n'),
      auth: 'key-or-sre',
      request: { body: templateSendSchema },
      responses: { 202: { description: 'Queued for sending', schema: chatappMessageSchema } },
      errors: { 400: 'Unknown template, or a variable missing, empty or unknown (each named)', 403: 'Consent missing: opted_in and/or proactive_allowed', 404: 'Unknown user', 409: 'Outside the 24-hour window with a template that has no approved Content SID' },
      handler: async ({ body }) => publicMessage(await acceptTemplateSend(body)),
    })
    .route({
      method: 'post',
      path: '/api/chatapp/messages',
      tags: ['chatapp'],
      summary: 'Send a free-form message (text, buttons or list) inside the customer window',
      description: [
        'Not in the spec; the way operators and services send session messages.',
        `Allowed only within 24 hours of the user's latest inbound message (409 naming the rule otherwise; use a template). Rich messages: at most ${MAX_BUTTONS} buttons or ${MAX_LIST_ITEMS} list entries (400 before anything is sent).`,
        'Rich messages are sent as Twilio Content (twilio/quick-reply, twilio/list-picker). Response: 202 with the message record.',
      ].join(' '),
      auth: 'key-or-sre',
      request: { body: sessionMessageSchema },
      responses: { 202: { description: 'Queued for sending', schema: chatappMessageSchema } },
      errors: { 400: `More than ${MAX_BUTTONS} buttons or ${MAX_LIST_ITEMS} list entries, or other invalid fields`, 404: 'Unknown user', 409: 'Outside the 24-hour customer window: only templates may be sent' },
      handler: async ({ body }) => publicMessage(await acceptSessionMessage(body)),
    })
    .route({
      method: 'get',
      path: '/api/chatapp/messages/{message_id}',
      tags: ['chatapp'],
      summary: 'One messaging-app message with its delivery state',
      auth: 'key-or-sre',
      request: { params: messageParams },
      responses: { 200: { description: 'The message', schema: chatappMessageSchema } },
      handler: async ({ params }) => {
        const message = await getMessage(params.message_id);
        if (!message) throw new NotFoundError(`No chatapp message ${params.message_id}.`);
        return publicMessage(message);
      },
    })
    .route({
      method: 'get',
      path: '/api/chatapp/messages',
      tags: ['chatapp'],
      summary: 'Messaging-app messages of a user or phone number, newest first',
      auth: 'key-or-sre',
      request: {
        query: messageQuery,
      },
      responses: { 200: { description: 'Messages', schema: messageList } },
      handler: async ({ query }) => ({ messages: (await listMessages(query)).map(publicMessage) }),
    })
    .route({
      method: 'post',
      path: '/api/chat',
      tags: ['chat'],
      summary: 'Web chat: send a message, get the assistant reply',
      description: [
        'Shapes not shown in the spec; decided: request `{user_id, message, interaction_id?}`; response `{session_id, interaction_id, resumed, turn_id, user_message_id, status, reply, reply_message_id, tool_calls}`.',
        '',
        "The user's session is resolved (or created); the message is published at once on channel `chat` (other channels' subscribers see it immediately). The agent then answers in a worker, publishing TYPING (is_typing true/false) and TOOL_CALL / TOOL_RESULT for each tool call on channel `chat`, then the reply as an assistant MESSAGE (metadata: turn_id, tool_calls).",
        `The request waits up to ${WEB_CHAT_WAIT_MS / 1000} s: 200 with status \`answered\` and the reply; else 202 with status \`pending\` (the reply still arrives on GET /api/sessions/{session_id}/events and in the context).`,
        'Without a configured model (LLM_PROVIDER=none) the reply is a fixed text saying so; publishing and events still run.',
      ].join('\n'),
      auth: 'key-or-sre',
      request: { body: webChatRequestSchema },
      responses: {
        200: { description: 'Answered', schema: webChatResponseSchema },
        202: { description: 'The reply was not ready in time (status pending)', schema: webChatResponseSchema },
      },
      errors: { 404: 'Unknown user, or interaction_id not of the user\'s session', 409: 'The interaction is closed', 429: 'The person is over LIMIT_AGENT_TURNS_PER_MINUTE (Retry-After); nothing is published' },
      handler: async ({ body }, ctx) => {
        const result = await webChat(body);
        ctx.status = result.status === 'answered' ? 200 : 202;
        return result;
      },
    });
}
