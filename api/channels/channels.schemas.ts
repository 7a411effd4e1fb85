/** Request and response schemas of the channel routes (index.ts), and what the channels' webhooks share. */
import { z, uuid } from '../../shared/zod.js';
import type { ChannelMessage } from '../../shared/channels/messages.store.js';

export const channelMessageSchema = z
  .object({
    message_id: uuid(),
    channel: z.string(),
    direction: z.enum(['inbound', 'outbound']),
    provider_message_id: z.string().nullable().describe('the provider\'s id: Twilio MessageSid, Slack event_id (inbound) or ts (outbound), email Message-ID'),
    remote_address: z.string().describe('who wrote or is written to: E.164 number, Slack user id, email address'),
    local_address: z.string().nullable().describe('our side: the number written to, the Slack channel, our mailbox'),
    thread_ref: z.string().nullable().describe('Slack thread_ts, or the email thread\'s first Message-ID'),
    user_id: uuid().nullable(),
    session_id: uuid().nullable(),
    interaction_id: uuid().nullable(),
    body: z.string().nullable(),
    status: z.enum(['received', 'processed', 'refused', 'queued', 'sending', 'sent', 'failed', 'suppressed']),
    reply_to: uuid().nullable(),
    attempts: z.number().int(),
    error: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .openapi('ChannelMessage');

/** A stored message as the API shows it (the provider's raw payload stays inside). */
export function publicChannelMessage(m: ChannelMessage): z.input<typeof channelMessageSchema> {
  const { payload: _payload, send_started_at: _started, created_at, sent_at, ...rest } = m;
  return { ...rest, created_at: created_at.toISOString(), sent_at: sent_at?.toISOString() ?? null };
}

export const channelStatusSchema = z
  .object({
    channels: z.array(z.object({ channel: z.string(), live: z.boolean(), missing_settings: z.array(z.string()).describe('variables still to set for the channel to run') })),
  })
  .openapi('ChannelStatuses');

export const channelMessageParams = z.object({ message_id: uuid() });
export const channelMessageQuery = z.object({
  channel: z.string().max(50).optional(),
  user_id: uuid().optional(),
  remote_address: z.string().max(320).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export const channelMessageList = z.object({ messages: z.array(channelMessageSchema) });

/** A Twilio webhook's form parameters as documented; its required ones are checked after the signature, which covers them all. */
export const twilioForm = (description: string) => z.record(z.string(), z.string()).openapi({ description });
/** What a Twilio webhook is answered: TwiML. */
export const twimlSchema = z.string();

/** A proactive template send (sms, messaging app): every variable of the template, none other. */
export const templateSendBody = z.object({
  user_id: uuid(),
  template_name: z.string().min(1).max(100),
  variables: z.record(z.string(), z.string().max(1024)).default({}),
});
