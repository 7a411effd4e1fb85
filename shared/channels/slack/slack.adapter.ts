/**
 * The slack channel: direct messages to the app and mentions of it, from the configured workspaces
 * only (SLACK_TEAM_IDS, SLACK_ENTERPRISE_IDS), from Slack users linked to a platform user by a link
 * that person confirmed while signed in (slack_links; a profile email proves nothing). An unlinked
 * user is answered with a link to confirm. Replies go in the same thread: in a direct message with
 * chat.postMessage, in a shared channel as an ephemeral message only the person sees (an answer may
 * hold their personal data). A reply asking the person to confirm a change carries Confirm / Cancel
 * buttons (confirm-blocks.ts); the reply to a press first replaces the pressed message, buttons gone.
 */
import type { KnownBlock } from '@slack/web-api';
import { config } from '../../config.js';
import { z } from '../../zod.js';
import { logger } from '../../logger.js';
import { getUser } from '../../users/users.store.js';
import type { WaitingQuestion } from '../../agent/consent.js';
import { findBotReplies, isTransientSlackError, postSlackEphemeral, postSlackMessage, replaceSlackMessage } from '../../clients/slack.js';
import { PermanentSendError, type ChannelAdapter } from '../contract.js';
import { getMessage, type ChannelMessage } from '../messages.store.js';
import { answeredBlocks, questionBlocks } from './confirm-blocks.js';
import { createLinkRequest, linkedUserId } from './links.store.js';

export const SLACK = 'slack';

/** The page where a signed-in person confirms a link request (PUBLIC_URL + this + ?token=…). */
export const SLACK_LINK_PATH = '/slack/link';

/** What an unlinked Slack user is told, with their link (only they see it: a DM, or ephemeral in a channel). */
export const slackLinkReply = (url: string, minutes: number) =>
  `I don't know who you are on switchboard yet. Open ${url} while signed in to switchboard and confirm the link (valid ${minutes} minutes); then write to me again.`;

/** Whether a team (and enterprise) is one this deployment serves. */
export function slackWorkspaceAllowed(teamId: string | undefined, enterpriseId: string | undefined): boolean {
  const { teamIds, enterpriseIds } = config().channels.slack;
  if (!teamId || !teamIds.includes(teamId)) return false;
  return enterpriseIds.length === 0 || (!!enterpriseId && enterpriseIds.includes(enterpriseId));
}

const teamOf = (message: ChannelMessage) => String((message.metadata as { team_id?: string }).team_id ?? '');
/** A direct message to the app; anything else (a mention in a channel) is shared with others. */
const isDirect = (message: ChannelMessage) => (message.metadata as { channel_type?: string }).channel_type === 'im';

/** What a recorded press of Confirm / Cancel (interactions.ts) keeps in its metadata. */
type ButtonPress = { via?: string; confirmation_id?: string; summary?: string };
const pressOf = (message: ChannelMessage) => message.metadata as ButtonPress;

/**
 * The reply to a press replaces the pressed message first (its response_url, kept in the press's
 * payload), so its buttons cannot be pressed again. A failure only leaves the buttons there (a later
 * press is answered "no longer open"): it is logged, and the reply still goes out.
 */
async function replacePressed(reply: ChannelMessage): Promise<void> {
  const press = reply.reply_to ? await getMessage(reply.reply_to) : undefined;
  const payload = press?.payload as { response_url?: string; message?: { blocks?: KnownBlock[] } } | null | undefined;
  if (!press?.payload || !payload?.response_url) return;
  const answer = press.body === 'yes' ? 'yes' : 'no';
  const summary = pressOf(press).summary ?? '';
  try {
    await replaceSlackMessage(payload.response_url, `${answer === 'yes' ? 'Confirmed' : 'Cancelled'}: ${summary}`, answeredBlocks(payload.message?.blocks, summary, answer));
  } catch (err) {
    logger('channels.slack').warn({ err, message_id: press.message_id }, 'the pressed message could not be replaced; its buttons stay');
  }
}

/** The event envelope of the Events API (event_callback) and the URL check (url_verification). */
export const slackEnvelopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url_verification'), challenge: z.string().max(1000), token: z.string().optional() }),
  z.object({
    type: z.literal('event_callback'),
    event_id: z.string().min(1).max(100),
    team_id: z.string().max(50).optional(),
    enterprise_id: z.string().max(50).nullish(),
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
  const { signingSecret, botToken, teamIds } = config().channels.slack;
  return [!signingSecret && 'SLACK_SIGNING_SECRET', !botToken && 'SLACK_BOT_TOKEN', !teamIds.length && 'SLACK_TEAM_IDS'].filter((s): s is string => Boolean(s));
}

export const slackAdapter: ChannelAdapter = {
  channel: SLACK,
  missingSettings: slackMissingSettings,
  async findUser(message) {
    const userId = await linkedUserId(teamOf(message), message.remote_address);
    return userId ? getUser(userId) : undefined;
  },
  unknownSenderReply: null,
  async unknownSenderReplyFor(message) {
    const minutes = config().channels.slack.linkMinutes;
    const token = await createLinkRequest(teamOf(message), message.remote_address, minutes);
    return slackLinkReply(`${config().publicUrl}${SLACK_LINK_PATH}?token=${token}`, minutes);
  },
  // One interaction per Slack conversation (the DM, or the channel the app was mentioned in).
  interactionRef: (message) => message.local_address!,
  // A press of Confirm / Cancel answers the question it was under, and only that one.
  namedAnswer: (message) => (pressOf(message).via === 'button' ? pressOf(message).confirmation_id : undefined),
  publishMetadata: (message) => ({
    event_id: (message.metadata as { event_id?: string }).event_id,
    slack_user: message.remote_address,
    slack_channel: message.local_address,
    thread_ts: message.thread_ref,
  }),
  reply: (inbound, body, question) => ({
    channel: SLACK,
    remote_address: inbound.remote_address,
    local_address: inbound.local_address,
    thread_ref: inbound.thread_ref,
    body,
    metadata: {
      // Outside a direct message only the person sees the answer.
      ...(isDirect(inbound) ? {} : { ephemeral_user: inbound.remote_address }),
      ...(question ? { confirmation: question } : {}),
      ...(pressOf(inbound).via === 'button' ? { answers_press: true } : {}),
    },
  }),
  maxReplyChars: 4000,

  async send(message) {
    try {
      const { ephemeral_user: ephemeralUser, confirmation, answers_press: answersPress } = message.metadata as { ephemeral_user?: string; confirmation?: WaitingQuestion; answers_press?: boolean };
      if (answersPress) await replacePressed(message);
      // The text stays the whole reply: the notification's fallback, and what findSent looks for.
      const blocks = confirmation ? questionBlocks(message.body ?? '', confirmation) : undefined;
      const posted = ephemeralUser
        ? await postSlackEphemeral(message.local_address!, ephemeralUser, message.body ?? '', message.thread_ref ?? undefined, blocks)
        : await postSlackMessage(message.local_address!, message.body ?? '', message.thread_ref ?? undefined, blocks);
      return { provider_message_id: posted.ts, metadata: { slack_channel: posted.channel } };
    } catch (err) {
      if (!isTransientSlackError(err)) throw new PermanentSendError(`Slack refused the message: ${(err as Error).message}`);
      throw err;
    }
  },

  async findSent(message, exclude) {
    // Ephemeral messages are not in the channel's history: a lost answer is posted again.
    if (!message.thread_ref || (message.metadata as { ephemeral_user?: string }).ephemeral_user) return undefined;
    const since = Math.floor(message.send_started_at!.getTime() / 1000) - 120;
    const found = await findBotReplies(message.local_address!, message.thread_ref, message.body ?? '', since);
    const taken = await exclude(found);
    const first = found.find((ts) => !taken.has(ts));
    return first ? { provider_message_id: first } : undefined;
  },
};
