/**
 * The channel contract: what one channel (SMS, Slack, email, …) tells the shared pipeline
 * (shared/channels/pipeline.ts), which runs the same steps for every channel: verify and record the
 * inbound message once, find the user, resolve the session, open or reuse the interaction (CHANNEL_JOINED),
 * run the agent, publish both messages, send the reply once, and end the interaction when the
 * channel falls quiet (CHANNEL_LEFT). A new channel is one folder that implements this and one line
 * in shared/channels/adapters.ts; its webhook route records messages with `acceptInbound`.
 */
import type { User } from '../users/users.store.js';
import type { ChannelMessage, NewOutbound } from './messages.store.js';

/** What a provider's send reports: its id for the message, and anything worth keeping (e.g. an email Message-ID). */
export interface SendReceipt {
  provider_message_id: string;
  metadata?: Record<string, unknown>;
}

/** A reply a channel decided on before the agent (a carrier keyword, for instance): sent as is; the agent is not asked. */
export interface Intercepted {
  outcome: string;
  reply: string | null;
}

export interface ChannelAdapter {
  /** The channel name of spec 000 (sms, slack, email…): interactions, messages and events carry it. */
  channel: string;
  /** Settings the channel needs that are not set (their variable names); empty: the channel is live. */
  missingSettings(): string[];
  /** The platform user behind an inbound message, or undefined for a sender we do not know. */
  findUser(message: ChannelMessage): Promise<User | undefined>;
  /** What an unknown sender is told (null: nothing). */
  unknownSenderReply: string | null;
  /** What this unknown sender is told, when it depends on the message (Slack: a link to confirm who they are); else unknownSenderReply. */
  unknownSenderReplyFor?(message: ChannelMessage): Promise<string | null>;
  /** The channel_ref of the interaction an inbound message belongs to: an active interaction of the session with this ref is reused. */
  interactionRef(message: ChannelMessage): string;
  /** Metadata published with both messages of an exchange (spec: provider ids, addresses). */
  publishMetadata(message: ChannelMessage): Record<string, unknown>;
  /** Handles a message before the agent is asked (e.g. STOP/START/HELP); undefined lets the agent answer. */
  intercept?(message: ChannelMessage, user: User): Promise<Intercepted | undefined>;
  /** Whether a reply may go out to this user now (e.g. not after an SMS opt-out); default yes. */
  mayReply?(user: User): Promise<boolean>;
  /** The outbound record of a reply to `inbound` (addresses, thread, channel metadata such as an email's subject). */
  reply(inbound: ChannelMessage, body: string): Omit<NewOutbound, 'user_id' | 'session_id' | 'interaction_id' | 'reply_to'>;
  /** Longest reply text the channel sends in one message. */
  maxReplyChars: number;
  /** Sends one recorded outbound message through the provider. Throw PermanentSendError when the provider refused it for good. */
  send(message: ChannelMessage): Promise<SendReceipt>;
  /**
   * A send whose answer was lost (the message was left `sending`), looked up at the provider: its receipt
   * if the provider has it, so the retry adopts it instead of sending a second copy. Absent: the channel
   * cannot look sends up, and a retry sends again.
   */
  findSent?(message: ChannelMessage, exclude: (ids: string[]) => Promise<Set<string>>): Promise<SendReceipt | undefined>;
}

/** Raised by an adapter when the provider refused a message for good (retrying cannot help). */
export class PermanentSendError extends Error {}
