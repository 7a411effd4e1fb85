/** The slack channel: Slack's Events API request URL and its Interactivity Request URL (the Confirm / Cancel buttons). */
import type { Context } from 'koa';
import { ApiRouter } from '../routing.js';
import { sessionSystemOff } from '../sessions/gate.js';
import { config } from '../../shared/config.js';
import { ForbiddenError, ValidationError, fieldErrors } from '../../shared/errors.js';
import { acceptInbound, assertLive } from '../../shared/channels/pipeline.js';
import { verifySlackRequest } from '../../shared/channels/slack/signature.js';
import { SLACK, isPersonWriting, slackAdapter, slackEnvelopeSchema, slackText, slackWorkspaceAllowed } from '../../shared/channels/slack/slack.adapter.js';
import { acceptButtonAnswer, interactionWorkspace, slackInteractionSchema } from '../../shared/channels/slack/interactions.js';
import { formParams, rawBody } from './form.js';
import { slackAck, slackEventsAnswer, slackEventsBody, slackInteractionForm } from './slack.schemas.js';

const signatureDoc =
  '**Signature** (Slack\'s request signing): `X-Slack-Signature` = `v0=` + hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}` keyed by SLACK_SIGNING_SECRET, compared in constant time. A header missing → 400; a timestamp more than 5 minutes from now or a wrong signature → 403. Nothing is stored either way.';

/** The signature check of every Slack request (events and interactions alike), over the raw body. */
function verifySigned(ctx: Context): void {
  assertLive(slackAdapter);
  verifySlackRequest(config().channels.slack.signingSecret, { signature: ctx.get('X-Slack-Signature') || undefined, timestamp: ctx.get('X-Slack-Request-Timestamp') || undefined }, rawBody(ctx));
}

/** Signed by our app is not enough: an app installed in another workspace signs its requests too. */
function assertWorkspace(teamId: string | undefined, enterpriseId: string | undefined): void {
  if (!slackWorkspaceAllowed(teamId, enterpriseId)) {
    throw new ForbiddenError('Requests of this Slack workspace are not accepted (SLACK_TEAM_IDS, SLACK_ENTERPRISE_IDS).', [], { team_id: teamId ?? null });
  }
}

export function slackRoutes(router: ApiRouter): ApiRouter {
  return router.route({
    method: 'post',
    path: '/slack/events',
    tags: ['channels'],
    summary: 'Slack Events API request URL',
    description: [
      'Set this as the app\'s Event Subscriptions request URL, with the bot events `message.im` and `app_mention` (scopes `im:history`, `app_mentions:read`, `chat:write`).',
      '',
      signatureDoc,
      '',
      '`url_verification` is answered with its `challenge`. An `event_callback` for a direct message to the app or a mention of it is recorded once per message (channel + ts: a retry of the same `event_id`, with `X-Slack-Retry-Num`, and the second event Slack may send for one message are stored once; answered 200 with `X-Channel-Duplicate: true`) and queued, and the answer is an empty 200 at once (Slack wants it within 3 s). Other events (edits, bot messages, our own replies) are acknowledged and ignored.',
      '',
      '**Workspace**: an `event_callback` whose `team_id` is not in SLACK_TEAM_IDS (or, when SLACK_ENTERPRISE_IDS is set, whose `enterprise_id` is not in it) is refused with 403; nothing is stored.',
      '',
      'A worker then finds the platform user the Slack user is linked to (a link the person confirmed while signed in, GET /slack/link; a profile email proves nothing). An unlinked user is answered only with a link to confirm, and the model is not asked. Otherwise it resolves the session, opens or reuses the `slack` interaction of that Slack conversation, runs the agent, publishes both messages on channel `slack` (metadata `event_id`, `slack_user`, `slack_channel`, `thread_ts`) and answers in the same thread: `chat.postMessage` in a direct message, `chat.postEphemeral` (only the person sees it) after a mention in a shared channel.',
    ].join('\n'),
    auth: 'public',
    request: {
      body: slackEventsBody,
    },
    responses: {
      200: { description: 'url_verification: the challenge; otherwise acknowledged (queued or ignored)', schema: slackEventsAnswer },
    },
    errors: { 400: 'X-Slack-Signature or X-Slack-Request-Timestamp missing, or not an Events API envelope', 403: 'Signature does not match, the timestamp is more than 5 minutes from now, or the event is of a workspace not in SLACK_TEAM_IDS / SLACK_ENTERPRISE_IDS', 503: `The slack channel is not configured (missing_settings names SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN), or ${sessionSystemOff}` },
    handler: async (_input, ctx) => {
      verifySigned(ctx);
      const parsed = slackEnvelopeSchema.safeParse((ctx.request as { body?: unknown }).body);
      if (!parsed.success) throw new ValidationError('Not an Events API envelope.', fieldErrors('body', parsed.error.issues));
      const envelope = parsed.data;
      if (envelope.type === 'url_verification') return { challenge: envelope.challenge };
      if (envelope.type !== 'event_callback') return {};
      assertWorkspace(envelope.team_id, envelope.enterprise_id ?? undefined);
      if (!isPersonWriting(envelope.event)) return {};
      const event = envelope.event;
      const { duplicate } = await acceptInbound({
        channel: SLACK,
        provider_message_id: `${event.channel}:${event.ts}`,
        remote_address: event.user,
        local_address: event.channel,
        thread_ref: event.thread_ts ?? event.ts,
        body: slackText(event.text),
        payload: envelope as Record<string, unknown>,
        metadata: { event_id: envelope.event_id, team_id: envelope.team_id ?? null, enterprise_id: envelope.enterprise_id ?? null, event_type: event.type, channel_type: event.channel_type ?? null, retry_num: ctx.get('X-Slack-Retry-Num') || null },
      });
      ctx.set('X-Channel-Duplicate', String(duplicate));
      return {};
    },
  }).route({
    method: 'post',
    path: '/slack/interactions',
    tags: ['channels'],
    summary: 'Slack Interactivity request URL (Confirm / Cancel under the assistant\'s question)',
    description: [
      'Set this as the app\'s Interactivity & Shortcuts Request URL. When the assistant wants to run a tool that changes data, its Slack reply ends with the question in plain words and two buttons, Confirm and Cancel (Block Kit; action ids `confirm:<confirmation_id>` and `cancel:<confirmation_id>`). A press is posted here by Slack as `application/x-www-form-urlencoded` with one field, `payload`: the interaction payload JSON (`type` `block_actions`).',
      '',
      signatureDoc,
      '',
      '**Workspace**: a payload whose `team.id` is not in SLACK_TEAM_IDS (or, when SLACK_ENTERPRISE_IDS is set, whose `enterprise.id` is not in it) is refused with 403; nothing is stored.',
      '',
      '**Who may answer**: only the person the question was asked of. The pressing Slack user (`user.id` in that team) must be linked to the platform user whose session holds the confirmation; anyone else gets 403, nothing is recorded and the question stays open. Interactions that are no Confirm / Cancel button are acknowledged and ignored.',
      '',
      'The press is recorded once per confirmation (a second press of either button answers 200 with `X-Channel-Duplicate: true`) as the person\'s answer, `yes` or `no`, published on channel `slack`, and queued; the answer is an empty 200 at once. A worker then settles that confirmation only, as a typed yes or no would be: the tool runs on Confirm (with the person\'s rights, checked again), nothing runs on Cancel, and a question asked more than CONFIRMATION_TTL_SECONDS ago is answered as expired. The session\'s audit trail gets `confirmation_answered` (answer, outcome). The pressed message is replaced through the payload\'s `response_url` (its words without the buttons, and which was pressed), and the outcome is the reply in the same thread (ephemeral where the question was). Replying yes or no in text keeps working.',
    ].join('\n'),
    auth: 'public',
    request: {
      body: slackInteractionForm,
      bodyType: 'application/x-www-form-urlencoded',
    },
    responses: { 200: { description: 'Acknowledged: the answer is queued, or the interaction ignored', schema: slackAck } },
    errors: {
      400: 'X-Slack-Signature or X-Slack-Request-Timestamp missing, or no `payload` holding an interaction payload',
      403: 'Signature does not match, the timestamp is more than 5 minutes from now, the workspace is not in SLACK_TEAM_IDS / SLACK_ENTERPRISE_IDS, or the pressing Slack user is not linked to the person the question was asked of',
      503: `The slack channel is not configured (missing_settings names SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN), or ${sessionSystemOff}`,
    },
    handler: async (_input, ctx) => {
      verifySigned(ctx);
      let json: unknown;
      try {
        json = JSON.parse(formParams(ctx).payload ?? '');
      } catch {
        throw new ValidationError('The form field payload must hold the interaction payload JSON.', [{ path: 'body.payload', message: 'must be JSON' }]);
      }
      const parsed = slackInteractionSchema.safeParse(json);
      if (!parsed.success) throw new ValidationError('Not an interaction payload.', fieldErrors('body.payload', parsed.error.issues));
      const { teamId, enterpriseId } = interactionWorkspace(parsed.data);
      assertWorkspace(teamId, enterpriseId);
      const accepted = await acceptButtonAnswer(parsed.data);
      if (accepted) ctx.set('X-Channel-Duplicate', String(accepted.duplicate));
      return {};
    },
  });
}
