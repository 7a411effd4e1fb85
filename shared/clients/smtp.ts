/** Outgoing email over SMTP through `nodemailer` (EMAIL_SMTP_URL). */
import type { Transporter } from 'nodemailer';
import { config } from '../config.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

const nodemailer = loadOnFirstUse<typeof import('nodemailer')>('nodemailer');

let transport: Transporter | undefined;

export interface OutgoingEmail {
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Our Message-ID, fixed before the first attempt so a resend is recognisably the same message. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  /** An automatic answer: marked `Auto-Submitted: auto-replied` (RFC 3834), so other robots do not answer it. */
  autoReplied?: boolean;
}

/** Sends one email; resolves with the Message-ID and the server's answer. */
export async function sendEmail(mail: OutgoingEmail): Promise<{ messageId: string; response: string }> {
  transport ??= nodemailer().createTransport(config().channels.email.smtpUrl!);
  const info = await transport.sendMail({
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId: mail.messageId,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
    ...(mail.references?.length ? { references: mail.references } : {}),
    ...(mail.autoReplied ? { headers: { 'Auto-Submitted': 'auto-replied' } } : {}),
  });
  return { messageId: info.messageId ?? mail.messageId, response: String(info.response ?? '') };
}

/** True for SMTP failures worth retrying: 4xx answers and connection faults; 5xx answers are permanent. */
export function isTransientSmtpError(err: unknown): boolean {
  const code = (err as { responseCode?: number }).responseCode;
  return !(typeof code === 'number' && code >= 500);
}

/** Forgets the cached transport (tests change the configuration between files). */
export function resetSmtp(): void {
  transport?.close();
  transport = undefined;
}
