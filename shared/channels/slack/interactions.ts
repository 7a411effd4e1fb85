/**
 * A press of Confirm or Cancel under the assistant's question in Slack (an interaction payload of
 * type block_actions, posted to the app's Interactivity Request URL). Only the person the question
 * was asked of answers it: the pressing Slack user must be linked to the platform user whose session
 * holds the confirmation. The press is then recorded as their answer (yes / no) once per confirmation
 * and queued like a message, so the one turn settles it (the tool runs on yes) and the reply goes out
 * in the thread, the buttons replaced.
 */
import { z } from '../../zod.js';
import { ForbiddenError } from '../../errors.js';
import { getConfirmation } from '../../agent/confirmations.store.js';
import { acceptInbound } from '../pipeline.js';
import { buttonAnswer } from './confirm-blocks.js';
import { linkedUserId } from './links.store.js';
import { SLACK } from './slack.adapter.js';

/** The parts of an interaction payload we read (Slack sends more; it is kept as sent). */
export const slackInteractionSchema = z.looseObject({
  type: z.string().max(50),
  team: z.looseObject({ id: z.string().max(50) }).nullish(),
  enterprise: z.looseObject({ id: z.string().max(50) }).nullish(),
  user: z.looseObject({ id: z.string().min(1).max(50), team_id: z.string().max(50).optional() }),
  container: z.looseObject({ type: z.string().max(50), channel_id: z.string().max(50).optional(), message_ts: z.string().max(50).optional(), thread_ts: z.string().max(50).optional(), is_ephemeral: z.boolean().optional() }).optional(),
  channel: z.looseObject({ id: z.string().max(50) }).nullish(),
  message: z.looseObject({ ts: z.string().max(50).optional(), thread_ts: z.string().max(50).optional() }).optional(),
  response_url: z.string().max(1000).optional(),
  actions: z.array(z.looseObject({ action_id: z.string().max(255), action_ts: z.string().max(50).optional() })).max(25).optional(),
});
export type SlackInteraction = z.output<typeof slackInteractionSchema>;

/** The workspace an interaction comes from (checked like an event's: SLACK_TEAM_IDS, SLACK_ENTERPRISE_IDS). */
export const interactionWorkspace = (p: SlackInteraction) => ({ teamId: p.team?.id ?? p.user.team_id, enterpriseId: p.enterprise?.id ?? undefined });

/**
 * Records a press of Confirm / Cancel as the person's answer and queues it; undefined when the
 * interaction is no button of ours (acknowledged and ignored). Throws ForbiddenError, recording
 * nothing, when the pressing Slack user is not linked to the person the question was asked of (the
 * confirmation stays pending). A second press on the same question is a duplicate.
 */
export async function acceptButtonAnswer(p: SlackInteraction): Promise<{ duplicate: boolean } | undefined> {
  const pressed = p.type === 'block_actions' ? p.actions?.map((a) => buttonAnswer(a.action_id)).find(Boolean) : undefined;
  const channel = p.container?.channel_id ?? p.channel?.id;
  if (!pressed || !channel) return undefined;
  const { teamId } = interactionWorkspace(p);
  const [confirmation, clicker] = await Promise.all([getConfirmation(pressed.confirmation_id), teamId ? linkedUserId(teamId, p.user.id) : undefined]);
  if (!confirmation || !clicker || clicker !== confirmation.user_id) {
    throw new ForbiddenError('Only the person the question was asked of can answer it (their linked Slack account).', [], { confirmation_id: pressed.confirmation_id });
  }
  const { duplicate } = await acceptInbound({
    channel: SLACK,
    provider_message_id: `confirmation:${pressed.confirmation_id}`,
    remote_address: p.user.id,
    local_address: channel,
    // The reply goes where the question is: its thread (or under the question itself).
    thread_ref: p.container?.thread_ts ?? p.message?.thread_ts ?? p.container?.message_ts ?? null,
    body: pressed.answer,
    payload: p as Record<string, unknown>,
    metadata: {
      team_id: teamId ?? null,
      enterprise_id: p.enterprise?.id ?? null,
      event_type: 'block_actions',
      // Our questions outside a direct message are ephemeral: so is the answer to them.
      channel_type: p.container?.is_ephemeral ? 'channel' : 'im',
      via: 'button',
      confirmation_id: pressed.confirmation_id,
      summary: confirmation.summary,
    },
  });
  return { duplicate };
}
