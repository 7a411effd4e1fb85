/** The sms channel: Twilio's inbound webhook and proactive template SMS. */
import { ApiRouter } from '../routing.js';
import { sessionSystemOff } from '../sessions/gate.js';
import { ValidationError, fieldErrors } from '../../shared/errors.js';
import { templateNames, templates } from '../../shared/channels/chatapp/templates.js';
import { acceptInbound, assertLive } from '../../shared/channels/pipeline.js';
import { SMS, smsAdapter, smsParamsSchema, smsText } from '../../shared/channels/sms/sms.adapter.js';
import { acceptSmsTemplate } from '../../shared/channels/sms/proactive.js';
import { channelUrl, verifyTwilioSignature } from '../../shared/channels/twilio-signature.js';
import { channelMessageSchema, publicChannelMessage, twimlSchema } from './channels.schemas.js';
import { smsTemplateSend, smsWebhookParams } from './sms.schemas.js';
import { formParams } from './form.js';

const emptyTwiml = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const templateTable = templateNames.map((n) => `| ${n} | ${templates[n].variables.join(', ')} |`).join('\n');

export function smsRoutes(router: ApiRouter): ApiRouter {
  return router
    .route({
      method: 'post',
      path: '/sms/webhook',
      tags: ['channels'],
      summary: 'Inbound SMS webhook (Twilio Messaging)',
      description: [
        'Twilio calls this with form-encoded parameters (MessageSid, AccountSid, From `+E164`, To, Body, NumMedia, MediaUrl0…; others tolerated).',
        '',
        '**Signature**: `X-Twilio-Signature`, HMAC-SHA1 keyed by TWILIO_AUTH_TOKEN over the URL Twilio called (CHANNELS_PUBLIC_URL + `/sms/webhook`, else rebuilt from X-Forwarded-Proto / X-Forwarded-Host) and the sorted parameters. Missing → 400, wrong → 403; nothing is stored either way.',
        '',
        'Recorded once per MessageSid (a repeated delivery answers 200 with `X-Channel-Duplicate: true` and is not processed again) and queued; the answer is empty TwiML at once. A worker then finds the user by phone (an unknown number is told so), resolves the session, opens or reuses the `sms` interaction of that number (CHANNEL_JOINED), runs the agent, publishes the message and the reply on channel `sms` with metadata {message_sid, phone}, and sends the reply as an SMS from the number that was written to.',
        '',
        'Carrier keywords (a message that is only the word, any case, punctuation ignored): STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE opt the user out of `sms` (consent source `sms_reply`); START, YES, UNSTOP, OPTIN opt back in; HELP, INFO get the help text. Each is confirmed by SMS, recorded, and goes to no agent. After an opt-out, replies to other messages are recorded with status `suppressed` and not sent (the carrier would refuse them).',
      ].join('\n'),
      auth: 'public',
      request: {
        body: smsWebhookParams,
        bodyType: 'application/x-www-form-urlencoded',
      },
      responses: { 200: { description: 'Accepted (or a repeated delivery); empty TwiML', schema: twimlSchema, contentType: 'text/xml' } },
      errors: { 400: 'X-Twilio-Signature missing, or MessageSid / From / To missing or malformed', 403: 'X-Twilio-Signature does not match', 503: `The sms channel is not configured (missing_settings names TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, SMS_FROM_NUMBER), or ${sessionSystemOff}` },
      handler: async (_input, ctx) => {
        assertLive(smsAdapter);
        const params = formParams(ctx);
        verifyTwilioSignature(ctx.get('X-Twilio-Signature') || undefined, channelUrl(ctx), params);
        const parsed = smsParamsSchema.safeParse(params);
        if (!parsed.success) throw new ValidationError('The webhook parameters are invalid.', fieldErrors('body', parsed.error.issues));
        const p = parsed.data;
        const { duplicate } = await acceptInbound({
          channel: SMS,
          provider_message_id: p.MessageSid,
          remote_address: p.From,
          local_address: p.To,
          body: smsText(p),
          payload: params,
        });
        ctx.set('X-Channel-Duplicate', String(duplicate));
        ctx.type = 'text/xml';
        return emptyTwiml;
      },
    })
    .route({
      method: 'post',
      path: '/api/channels/sms/send',
      tags: ['channels'],
      summary: 'Send a proactive template SMS',
      description: [
        'The messaging-app templates, sent as their rendered text by SMS (no 24-hour window applies to SMS). Every variable required, none other accepted:',
        '',
        '| template_name | variables |',
        '|---|---|',
        templateTable,
        '',
        "Sent only when the user's `sms` consent has `opted_in` and `proactive_allowed` (403 naming the missing ones in `missing_consent`). 202 with the message record (status `queued`); a worker sends it from SMS_FROM_NUMBER with retries; read the outcome from GET /api/channels/messages/{message_id}.",
      ].join('\n'),
      auth: 'key-or-sre',
      request: { body: smsTemplateSend },
      responses: { 202: { description: 'Queued for sending', schema: channelMessageSchema } },
      errors: { 403: 'Consent missing: opted_in and/or proactive_allowed', 409: 'The user has no phone number', 503: 'The sms channel is not configured (missing_settings names what to set)' },
      handler: async ({ body }, ctx) => {
        assertLive(smsAdapter);
        ctx.status = 202;
        return publicChannelMessage(await acceptSmsTemplate(body));
      },
    });
}
