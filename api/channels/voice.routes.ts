/**
 * The voice channel: Twilio's incoming-call webhook answers TwiML that connects the call to
 * ConversationRelay, and the relay's WebSocket (GET /voice/relay, upgraded) carries the call.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { ApiRouter } from '../routing.js';
import { sessionSystemOff } from '../sessions/gate.js';
import { config } from '../../shared/config.js';
import { logger } from '../../shared/logger.js';
import { ServiceUnavailableError, ValidationError, fieldErrors } from '../../shared/errors.js';
import { twilioLib } from '../../shared/clients/twilio.js';
import { findUserByPhone } from '../../shared/users/users.store.js';
import { channelUrl, validTwilioRequest, verifyTwilioSignature } from '../../shared/channels/twilio-signature.js';
import { channelStatuses } from '../../shared/channels/status.js';
import { VoiceCall } from '../../shared/channels/voice/call.js';
import type { RelayOutbound } from '../../shared/channels/voice/relay-messages.js';
import { CallGuard } from '../../shared/channels/voice/call-guard.js';
import { claimRelayToken, issueRelayToken, relayTokenNonce } from '../../shared/channels/voice/relay-token.js';
import { forwardedHostTrusted } from '../middleware/client-address.js';
import { formParams } from './form.js';
import { twimlSchema } from './channels.schemas.js';
import { callParamsSchema, voiceWebhookParams } from './voice.schemas.js';

export const RELAY_PATH = '/voice/relay';

/** 503 naming what the voice channel still needs. */
function assertVoiceLive(): void {
  const voice = channelStatuses().find((c) => c.channel === 'voice')!;
  if (!voice.live) throw new ServiceUnavailableError(`The voice channel is not configured: set ${voice.missing_settings.join(', ')}.`, [], { channel: 'voice', missing_settings: voice.missing_settings });
}

/** The wss:// URL of the relay as Twilio will call (and sign) it, carrying the call's single-use token. */
function relayUrl(request: { protocol: string; host: string }, token: string): string {
  return channelUrl({ protocol: request.protocol, host: request.host, originalUrl: `${RELAY_PATH}?token=${encodeURIComponent(token)}` }, 'ws');
}

/** Twilio's StirVerstat for a caller whose number the originating carrier fully attests (SHAKEN level A). */
const ATTESTATION_A = 'TN-Validation-Passed-A';

export function voiceRoutes(router: ApiRouter): ApiRouter {
  return router.route({
    method: 'post',
    path: '/voice/incoming',
    tags: ['channels'],
    summary: 'Incoming call webhook (Twilio Voice, ConversationRelay)',
    description: [
      'Set as the number\'s "A call comes in" webhook (POST). Twilio sends form-encoded CallSid, AccountSid, From, To, CallStatus, Direction…; `X-Twilio-Signature` is checked as for SMS (missing → 400, wrong → 403).',
      '',
      'A caller whose number belongs to a user is answered with `<Connect><ConversationRelay url="wss://…/voice/relay?token=…" welcomeGreeting="VOICE_WELCOME_GREETING" dtmfDetection="true"/></Connect>`; an unknown caller hears VOICE_UNKNOWN_CALLER_MESSAGE (`<Say>`) and the call ends (`<Hangup/>`). The token is signed, bound to this CallSid, From and To (and to whether Twilio reported `StirVerstat` `TN-Validation-Passed-A`; the binding is kept server-side, so the URL holds no phone number), valid VOICE_RELAY_TOKEN_SECONDS and usable once.',
      '',
      '**The relay** (`wss://<host>/voice/relay?token=…`, the same URL base: CHANNELS_PUBLIC_URL, else the request\'s host, taken from X-Forwarded-Host / -Proto only when a TRUST_PROXY proxy sent them): the WebSocket upgrade must carry a valid `X-Twilio-Signature` over that URL and an unexpired token not used before (else 403); a CallSid past VOICE_MAX_SOCKETS_PER_CALL sockets gets 409. The first message must be the `setup` of the call the token names (same callSid, from and to), else the socket is closed (1008) before anything is looked up. A socket quiet both ways for VOICE_IDLE_SECONDS is closed; past VOICE_MAX_TURNS_PER_CALL caller turns the caller hears goodbye and the call ends.',
      '',
      '**Rights on a call**: caller ID alone (spoofable) earns the portal tool set over the caller\'s own data. The person\'s other rights (sales, SRE tools) need their voice PIN (PUT /api/portal/profile/voice-pin), said ("my PIN is 4 8 1 5") or keyed (`*4815#`), at most LIMIT_VOICE_PIN_ATTEMPTS per hour; the PIN never reaches the model or the transcript. With VOICE_TRUST_ATTESTATION_A on, a call Twilio attested at level A gets them without the PIN.',
      '',
      'The relay takes ConversationRelay\'s messages `setup`, `prompt`, `interrupt`, `dtmf`, `error` and answers `text` tokens as the model writes them (`last: true` ends a reply), `end` to hang up. The call is one active `voice` interaction (channel_ref the CallSid) for its whole length; each utterance and reply is published on channel `voice` with metadata `call_sid`; MESSAGEs of other channels enter the call\'s model context as `[Real-time update from <channel>] <role>: <content>`, and a user\'s message from another channel is answered aloud while the call is quiet. Hanging up closes the interaction with the call\'s transcript as final history (CHANNEL_LEFT, reason `hangup`).',
    ].join('\n'),
    auth: 'public',
    request: {
      body: voiceWebhookParams,
      bodyType: 'application/x-www-form-urlencoded',
    },
    responses: { 200: { description: 'TwiML: connect to the relay, or a refusal and hang-up', schema: twimlSchema, contentType: 'text/xml' } },
    errors: { 400: 'X-Twilio-Signature missing, or CallSid / From missing', 403: 'X-Twilio-Signature does not match', 503: `The voice channel is not configured (missing_settings names TWILIO_AUTH_TOKEN), or ${sessionSystemOff}` },
    handler: async (_input, ctx) => {
      assertVoiceLive();
      const params = formParams(ctx);
      verifyTwilioSignature(ctx.get('X-Twilio-Signature') || undefined, channelUrl(ctx), params);
      const parsed = callParamsSchema.safeParse(params);
      if (!parsed.success) throw new ValidationError('The webhook parameters are invalid.', fieldErrors('body', parsed.error.issues));
      const { voice } = config().channels;
      const twiml = new (twilioLib().twiml.VoiceResponse)();
      if (await findUserByPhone(parsed.data.From)) {
        const token = await issueRelayToken({ callSid: parsed.data.CallSid, from: parsed.data.From, to: parsed.data.To ?? '', attestedA: parsed.data.StirVerstat === ATTESTATION_A });
        twiml.connect().conversationRelay({ url: relayUrl(ctx, token), welcomeGreeting: voice.welcomeGreeting, dtmfDetection: true });
      } else {
        twiml.say(voice.unknownCallerMessage);
        twiml.hangup();
      }
      ctx.type = 'text/xml';
      return twiml.toString();
    },
  });
}

/** Serves the relay socket on the API's HTTP server (upgrades of other paths are left to others, e.g. Vite). */
export function attachVoiceRelay(server: http.Server): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const log = logger('channels.voice');
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== RELAY_PATH) return;
    const refuse = (status: number, reason: string) => {
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (!config().sessions.enabled) return refuse(503, 'Service Unavailable');
    if (!channelStatuses().find((c) => c.channel === 'voice')?.live) return refuse(503, 'Service Unavailable');
    // The URL Twilio signed, rebuilt as Koa rebuilds a webhook's: forwarded headers only from a TRUST_PROXY proxy.
    const trusted = forwardedHostTrusted(config().http.trustProxy, req.socket.remoteAddress ?? '');
    const forwarded = (name: string) => (trusted ? String(req.headers[name] ?? '').split(',')[0]!.trim() : '');
    const host = forwarded('x-forwarded-host') || req.headers.host || '';
    const proto = forwarded('x-forwarded-proto') || 'http';
    const url = channelUrl({ protocol: proto, host, originalUrl: req.url ?? RELAY_PATH }, 'ws');
    const signature = req.headers['x-twilio-signature'];
    if (typeof signature !== 'string' || !validTwilioRequest(signature, url, {})) return refuse(403, 'Forbidden');
    const nonce = relayTokenNonce(new URL(req.url ?? RELAY_PATH, 'ws://relay').searchParams.get('token') ?? '');
    if (!nonce) return refuse(403, 'Forbidden');
    void claimRelayToken(nonce).then(
      (claim) => {
        if (!claim.ok && claim.reason === 'used_or_expired') {
          log.warn('relay token used a second time or expired; upgrade refused');
          return refuse(403, 'Forbidden');
        }
        if (!claim.ok) {
          log.warn({ call_sid: claim.callSid }, 'call over VOICE_MAX_SOCKETS_PER_CALL; upgrade refused');
          return refuse(409, 'Conflict');
        }
        const token = claim.binding;
        wss.handleUpgrade(req, socket, head, (ws) => {
          const send = (message: RelayOutbound) => {
            guard.touch();
            if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
          };
          const call = new VoiceCall(send);
          const guard = new CallGuard(token, call, { send, close: (code, reason) => ws.close(code, reason) });
          ws.on('message', (data) => guard.receive(data.toString()));
          ws.on('close', () => {
            guard.stop();
            void call.end().catch((err) => log.error({ err }, 'ending a call failed'));
          });
          ws.on('error', (err) => log.warn({ err }, 'relay socket error'));
        });
      },
      (err) => {
        log.error({ err }, 'relay token could not be checked');
        refuse(503, 'Service Unavailable');
      },
    );
  });
}
