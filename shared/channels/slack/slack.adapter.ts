/**
 * The slack channel: direct messages to the app and mentions of it, from Slack users linked to a
 * platform user by the email of their Slack profile (users.info); answered in the same thread with
 * chat.postMessage.
 */
import { config } from '../../config.js';
import { z } from '../../zod.js';
import { findUserByEmail } from '../../users/users.store.js';
import { findBotReplies, isTransientSlackError, postSlackMessage, slackUserEmail } from '../../clients/slack.js';
import { PermanentSendError, type ChannelAdapter } from '../contract.js';

export const SLACK = 'slack';

export const SLACK_UNKNOWN_USER_REPLY =
  "I couldn't match your Slack account to a switchboard user: the email of your Slack profile must be the one of your switchboard account. Ask support to link them.";

/** The event envelope of the Events API (event_callback) and the URL check (url_verification). */
export const slackEnvelopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url_verification'), challenge: z.string().max(1000), token: z.string().optional() }),
  z.object({
    type: z.literal('event_callback'),
    event_id: z.string().min(1).max(100),
    team_id: z.string().max(50).optional(),
    api_app_id: z.string().max(50).optional(),
    event_time: z.number().optional(),
    event: z.looseObject({ type: z.string(), user: z.string().optional(), text: z.string().optional(), ts: z.string().optional(), thread_ts: z.string().optional(), channel: z.string().optional(), channel_type: z.string().optional(), subtype: z.string().optional(), bot_id: z.string().optional() }),
  }),
  z.looseObject({ type: z.enum(['app_rate_limited']) }),
]);
export type SlackEnvelope = z.output<typeof slackEnvelopeSchema>;
type SlackEvent = Extract<SlackEnvelope, { type: 'event_callback' }>['event'];

/**
 * Whether an event is a person writing to the app: a direct message (message, channel_type im) or a
 * mention (app_mention). Edits, joins and every bot's messages (ours included) are not.
 */
export function isPersonWriting(event: SlackEvent): event is SlackEvent & { user: string; ts: string; channel: string } {
  if (!event.user || !event.ts || !event.channel || event.bot_id || event.subtype) return false;
  return event.type === 'app_mention' || (event.type === 'message' && event.channel_type === 'im');
}

/** The text without the leading mention of the app (`<@U0APP> hello` → `hello`). */
export const slackText = (text: string | undefined) => (text ?? '').replace(/^\s*<@[A-Z0-9]+>\s*/, '').trim();

export function slackMissingSettings(): string[] {
  const { signingSecret, botToken } = config().channels.slack;
  return [!signingSecret && 'SLACK_SIGNING_SECRET', !botToken && 'SLACK_BOT_TOKEN'].filter((s): s is string => Boolean(s));
}

export const slackAdapter: ChannelAdapter = {
  channel: SLACK,
  missingSettings: slackMissingSettings,
  async findUser(message) {
    const email = await slackUserEmail(message.remote_address);
    return email ? findUserByEmail(email) : undefined;
  },
  unknownSenderReply: SLACK_UNKNOWN_USER_REPLY,
  // One interaction per Slack conversation (the DM, or the channel the app was mentioned in).
  interactionRef: (message) => message.local_address!,
  publishMetadata: (message) => ({
    event_id: (message.metadata as { event_id?: string }).event_id,
    slack_user: message.remote_address,
    slack_channel: message.local_address,
    thread_ts: message.thread_ref,
  }),
  reply: (inbound, body) => ({ channel: SLACK, remote_address: inbound.remote_address, local_address: inbound.local_address, thread_ref: inbound.thread_ref, body }),
  maxReplyChars: 4000,

  async send(message) {
    try {
      const posted = await postSlackMessage(message.local_address!, message.body ?? '', message.thread_ref ?? undefined);
      return { provider_message_id: posted.ts, metadata: { slack_channel: posted.channel } };
    } catch (err) {
      if (!isTransientSlackError(err)) throw new PermanentSendError(`Slack refused the message: ${(err as Error).message}`);
      throw err;
    }
  },

  async findSent(message, exclude) {
    if (!message.thread_ref) return undefined;
    const since = Math.floor(message.send_started_at!.getTime() / 1000) - 120;
    const found = await findBotReplies(message.local_address!, message.thread_ref, message.body ?? '', since);
    const taken = await exclude(found);
    const first = found.find((ts) => !taken.has(ts));
    return first ? { provider_message_id: first } : undefined;
  },
};
