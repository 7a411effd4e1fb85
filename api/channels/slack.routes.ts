/** The slack channel: Slack's Events API request URL. */
import { ApiRouter } from '../routing.js';
import { sessionSystemOff } from '../sessions/gate.js';
import { z } from '../../shared/zod.js';
import { config } from '../../shared/config.js';
import { ValidationError, fieldErrors } from '../../shared/errors.js';
import { acceptInbound, assertLive } from '../../shared/channels/pipeline.js';
import { verifySlackRequest } from '../../shared/channels/slack/signature.js';
import { SLACK, isPersonWriting, slackAdapter, slackEnvelopeSchema, slackText } from '../../shared/channels/slack/slack.adapter.js';
import { rawBody } from './form.js';

export function slackRoutes(router: ApiRouter): ApiRouter {
  return router.route({
    method: 'post',
    path: '/slack/events',
    tags: ['channels'],
    summary: 'Slack Events API request URL',
    description: [
      'Set this as the app\'s Event Subscriptions request URL, with the bot events `message.im` and `app_mention` (scopes `im:history`, `app_mentions:read`, `chat:write`, `users:read`, `users:read.email`).',
      '',
      '**Signature** (Slack\'s request signing): `X-Slack-Signature` = `v0=` + hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}` keyed by SLACK_SIGNING_SECRET, compared in constant time. A header missing → 400; a timestamp more than 5 minutes from now or a wrong signature → 403. Nothing is stored either way.',
      '',
      '`url_verification` is answered with its `challenge`. An `event_callback` for a direct message to the app or a mention of it is recorded once per message (channel + ts: a retry of the same `event_id`, with `X-Slack-Retry-Num`, and the second event Slack may send for one message are stored once; answered 200 with `X-Channel-Duplicate: true`) and queued, and the answer is an empty 200 at once (Slack wants it within 3 s). Other events (edits, bot messages, our own replies) are acknowledged and ignored.',
      '',
      'A worker then links the Slack user to a platform user by the email of the Slack profile (`users.info`; an unlinked user is told so in the thread), resolves the session, opens or reuses the `slack` interaction of that Slack conversation, runs the agent, publishes both messages on channel `slack` (metadata `event_id`, `slack_user`, `slack_channel`, `thread_ts`) and posts the reply in the same thread with `chat.postMessage`.',
    ].join('\n'),
    auth: 'public',
    request: {
      body: z.record(z.string(), z.unknown()).openapi({ description: 'An Events API envelope (url_verification or event_callback), JSON as Slack sends it.' }),
    },
    responses: {
      200: { description: 'url_verification: the challenge; otherwise acknowledged (queued or ignored)', schema: z.object({ challenge: z.string().optional() }) },
    },
    errors: { 400: 'X-Slack-Signature or X-Slack-Request-Timestamp missing, or not an Events API envelope', 403: 'Signature does not match, or the timestamp is more than 5 minutes from now', 503: `The slack channel is not configured (missing_settings names SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN), or ${sessionSystemOff}` },
    handler: async (_input, ctx) => {
      assertLive(slackAdapter);
      const body = rawBody(ctx);
      verifySlackRequest(config().channels.slack.signingSecret, { signature: ctx.get('X-Slack-Signature') || undefined, timestamp: ctx.get('X-Slack-Request-Timestamp') || undefined }, body);
      const parsed = slackEnvelopeSchema.safeParse((ctx.request as { body?: unknown }).body);
      if (!parsed.success) throw new ValidationError('Not an Events API envelope.', fieldErrors('body', parsed.error.issues));
      const envelope = parsed.data;
      if (envelope.type === 'url_verification') return { challenge: envelope.challenge };
      if (envelope.type !== 'event_callback' || !isPersonWriting(envelope.event)) return {};
      const event = envelope.event;
      const { duplicate } = await acceptInbound({
        channel: SLACK,
        provider_message_id: `${event.channel}:${event.ts}`,
        remote_address: event.user,
        local_address: event.channel,
        thread_ref: event.thread_ts ?? event.ts,
        body: slackText(event.text),
        payload: envelope as Record<string, unknown>,
        metadata: { event_id: envelope.event_id, team_id: envelope.team_id ?? null, event_type: event.type, retry_num: ctx.get('X-Slack-Retry-Num') || null },
      });
      ctx.set('X-Channel-Duplicate', String(duplicate));
      return {};
    },
  });
}
