/**
 * The email channel: the sender matched to a user by address, the new text of the message (quoted
 * history stripped) published, the reply sent over SMTP in the same thread (In-Reply-To, References),
 * one interaction per thread. Unknown senders get no answer: replying to forged senders would send
 * mail to people who never wrote (backscatter).
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../config.js';
import { findUserByEmail } from '../../users/users.store.js';
import { isTransientSmtpError, sendEmail } from '../../clients/smtp.js';
import { PermanentSendError, type ChannelAdapter } from '../contract.js';
import { replySubject } from './parse.js';

export const EMAIL = 'email';

export function emailMissingSettings(): string[] {
  const { address, smtpUrl } = config().channels.email;
  return [!address && 'EMAIL_ADDRESS', !smtpUrl && 'EMAIL_SMTP_URL'].filter((s): s is string => Boolean(s));
}

interface EmailMeta {
  subject?: string;
  references?: string[];
  message_id?: string;
  in_reply_to?: string;
  /** Why RFC 3834 forbids answering it (auto-reply.ts), set by the listener. */
  no_reply?: string;
}

export const emailAdapter: ChannelAdapter = {
  channel: EMAIL,
  missingSettings: emailMissingSettings,
  findUser: (message) => findUserByEmail(message.remote_address),
  unknownSenderReply: null,
  // Robots, lists, bounces and our own mail are recorded, not answered, and not given to the model (RFC 3834).
  async intercept(message) {
    const reason = (message.metadata as EmailMeta).no_reply;
    return reason ? { outcome: `not answered (RFC 3834): ${reason}`, reply: null } : undefined;
  },
  interactionRef: (message) => message.thread_ref!,
  publishMetadata: (message) => ({ message_id: message.provider_message_id, from: message.remote_address, subject: (message.metadata as EmailMeta).subject ?? '', thread: message.thread_ref }),

  reply(inbound, body) {
    const meta = inbound.metadata as EmailMeta;
    const domain = (config().channels.email.address ?? 'localhost').split('@')[1];
    return {
      channel: EMAIL,
      remote_address: inbound.remote_address,
      local_address: config().channels.email.address ?? inbound.local_address,
      thread_ref: inbound.thread_ref,
      body,
      metadata: {
        subject: replySubject(meta.subject ?? ''),
        in_reply_to: inbound.provider_message_id,
        references: [...(meta.references ?? []), inbound.provider_message_id!].filter((r, i, all) => all.indexOf(r) === i),
        message_id: `<${randomUUID()}@${domain}>`,
      },
    };
  },
  maxReplyChars: 100_000,

  // No lookup: SMTP has none. A resend carries the same Message-ID, by which mail clients show one message.
  async send(message) {
    const meta = message.metadata as EmailMeta;
    try {
      const sent = await sendEmail({
        from: message.local_address ?? config().channels.email.address!,
        to: message.remote_address,
        subject: meta.subject ?? 'Re:',
        text: message.body ?? '',
        messageId: meta.message_id!,
        inReplyTo: meta.in_reply_to,
        references: meta.references,
        autoReplied: true,
      });
      return { provider_message_id: sent.messageId, metadata: { smtp_response: sent.response } };
    } catch (err) {
      if (!isTransientSmtpError(err)) throw new PermanentSendError(`The SMTP server refused the message: ${(err as Error).message}`);
      throw err;
    }
  },
};
