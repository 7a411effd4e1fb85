/**
 * The channel contract: what one channel (SMS, Slack, email, the messaging app…) tells the one turn
 * (shared/channels/turn.ts, `runInboundTurn`), which runs the same steps for every channel: verify and
 * record the inbound message once, find the user, open the provider's window, resolve the session,
 * open or reuse the interaction (CHANNEL_JOINED), run the agent, publish both messages, send the reply
 * once, and end the interaction when the channel falls quiet (CHANNEL_LEFT). A new channel is one
 * folder that implements this and one line in shared/channels/adapters.ts; its webhook route records
 * messages with `acceptInbound` (pipeline.ts). docs/architecture.md, "A channel", has the steps.
 */
import type { WaitingQuestion } from '../agent/consent.js';
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

/** What the turn reads of a recorded message, in whichever table its channel keeps it. */
export interface RecordedMessage {
  message_id: string;
  direction: 'inbound' | 'outbound';
  status: string;
  body: string | null;
  provider_message_id: string | null;
}

/** Where an inbound message went: its user, session and interaction (null where it went to none). */
export interface TurnLink {
  user_id: string | null;
  session_id: string | null;
  interaction_id: string | null;
}

/**
 * Where a channel keeps its messages: `channel_messages` for the channels below (pipeline.ts),
 * `chatapp_messages` for the messaging app (templates, rich messages, provider statuses).
 */
export interface MessageBook<M extends RecordedMessage> {
  get(messageId: string): Promise<M | undefined>;
  /** The reply recorded for an inbound message, if any. */
  replyTo(messageId: string): Promise<M | undefined>;
  /**
   * Records the reply to `inbound` once (a repeat returns the first record); suppressed: recorded, never
   * sent. `question`: the confirmation the reply asks about (a channel with buttons shows them under it).
   */
  recordReply(inbound: M, body: string, link: TurnLink & { suppressed?: boolean; question?: WaitingQuestion }): Promise<M>;
  /** Queues a recorded message's send job (a repeat is a no-op while the first job is kept). */
  queueSend(message: M): Promise<void>;
  markProcessed(messageId: string, link: TurnLink & { metadata?: Record<string, unknown> }): Promise<void>;
}

/** What the turn of a recorded inbound message asks of its channel (pipeline.ts, `runInboundTurn`). */
export interface TurnAdapter<M extends RecordedMessage> {
  /** The channel name of spec 000 (sms, slack, email…): interactions, messages and events carry it. */
  channel: string;
  /** The platform user behind an inbound message, or undefined for a sender we do not know. */
  findUser(message: M): Promise<User | undefined>;
  /** What an unknown sender is told (null: nothing). */
  unknownSenderReply: string | null;
  /** What this unknown sender is told, when it depends on the message (Slack: a link to confirm who they are); else unknownSenderReply. */
  unknownSenderReplyFor?(message: M): Promise<string | null>;
  /** The channel_ref of the interaction an inbound message belongs to: an active interaction of the session with this ref is reused. */
  interactionRef(message: M): string;
  /** Metadata published with both messages of an exchange (spec: provider ids, addresses). */
  publishMetadata(message: M): Record<string, unknown>;
  /**
   * A provider that lets free text out only for a while after the person last wrote (the messaging
   * app's 24-hour customer window; outside it only approved templates may be sent): a known sender's
   * message opens it before anything else. Absent: the channel may always answer in free text.
   */
  window?: { open(message: M, user: User): Promise<void>; isOpen(address: string): Promise<boolean> };
  /**
   * The confirmation a message answers by name (a Slack button under its question): it settles that
   * one only and never reaches the model. Absent or undefined: a yes or no answers whatever is pending.
   */
  namedAnswer?(message: M): string | undefined;
  /** Handles a message before the agent is asked (e.g. STOP/START/HELP); undefined lets the agent answer. */
  intercept?(message: M, user: User): Promise<Intercepted | undefined>;
  /** Whether a reply may go out to this user now (e.g. not after an SMS opt-out); default yes. */
  mayReply?(user: User): Promise<boolean>;
  /** Longest reply text the channel sends in one message. */
  maxReplyChars: number;
}

export interface ChannelAdapter extends TurnAdapter<ChannelMessage> {
  /** Settings the channel needs that are not set (their variable names); empty: the channel is live. */
  missingSettings(): string[];
  /** The outbound record of a reply to `inbound` (addresses, thread, channel metadata such as an email's subject; the question it asks, if any). */
  reply(inbound: ChannelMessage, body: string, question?: WaitingQuestion): Omit<NewOutbound, 'user_id' | 'session_id' | 'interaction_id' | 'reply_to'>;
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
