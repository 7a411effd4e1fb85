/**
 * The inbound SMTP listener of the email channel (`smtp-server`; the email role). Chosen over a
 * provider's inbound webhook: any MX or relay can deliver to it (no provider lock-in), the message
 * arrives whole (headers for threading, Authentication-Results), and SMTP's own answers tell the
 * sender's server to retry (451) or give up (550) — nothing is accepted and then lost. It accepts mail
 * only for EMAIL_ADDRESS, parses it with mailparser, records it once per Message-ID and queues it.
 * TLS and sender checks (SPF, DKIM, DMARC) belong to the MX in front; with EMAIL_TRUSTED_AUTHSERV_ID
 * the listener requires that MX's passing Authentication-Results.
 */
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { acceptInbound } from '../pipeline.js';
import { EMAIL } from './email.adapter.js';
import { parseEmail, threadRoot, type ParsedEmail } from './parse.js';

/** An SMTP answer with its code (smtp-server sends `responseCode` and the message). */
const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

async function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Whether the trusted MX says the sender passed DMARC, DKIM or SPF (RFC 8601 Authentication-Results). */
export function senderAuthenticated(results: string[], authservId: string): boolean {
  return results.some((r) => r.trim().toLowerCase().startsWith(authservId.toLowerCase()) && /\b(dmarc|dkim|spf)=pass\b/i.test(r));
}

/** Records one received message; throws an SMTP answer for what must be refused. */
export async function receiveEmail(raw: Buffer): Promise<{ duplicate: boolean; email: ParsedEmail }> {
  const { address, trustedAuthservId } = config().channels.email;
  const email = await parseEmail(raw);
  if (!email.from) throw smtpError(550, '5.1.7 The message has no sender address');
  if (trustedAuthservId && !senderAuthenticated(email.authenticationResults, trustedAuthservId)) {
    throw smtpError(550, '5.7.1 Sender not authenticated (no passing Authentication-Results from the trusted MX)');
  }
  const { duplicate } = await acceptInbound({
    channel: EMAIL,
    provider_message_id: email.messageId,
    remote_address: email.from,
    local_address: address ?? email.to[0] ?? null,
    thread_ref: threadRoot(email),
    body: email.text || `[no text] ${email.subject}`.trim(),
    payload: { from: email.from, to: email.to, subject: email.subject, message_id: email.messageId, in_reply_to: email.inReplyTo ?? null, references: email.references },
    metadata: { subject: email.subject, references: email.references, in_reply_to: email.inReplyTo ?? null },
  });
  return { duplicate, email };
}

/** Starts the listener on EMAIL_LISTEN_HOST:EMAIL_LISTEN_PORT (or the given port); resolves with its address and a close function. */
export async function startEmailListener(options: { port?: number; host?: string } = {}): Promise<{ port: number; close: () => Promise<void> }> {
  const { address, listenPort, listenHost, maxBytes } = config().channels.email;
  const log = logger('channels.email');
  const mailbox = address?.toLowerCase();
  const server = new SMTPServer({
    name: address?.split('@')[1],
    banner: 'switchboard email channel',
    authOptional: true,
    // Plain SMTP behind the MX (which terminates TLS); no login: the listener relays nothing.
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    logger: false,
    onRcptTo(rcpt, _session, callback) {
      if (rcpt.address.toLowerCase() !== mailbox) return callback(smtpError(550, `5.1.1 <${rcpt.address}>: no such mailbox here`));
      callback();
    },
    onData(stream, _session, callback) {
      readAll(stream)
        .then(async (raw) => {
          if ((stream as { sizeExceeded?: boolean }).sizeExceeded) throw smtpError(552, `5.3.4 Message larger than ${maxBytes} bytes`);
          const { duplicate, email } = await receiveEmail(raw);
          log.info({ message_id: email.messageId, duplicate }, 'email received');
          callback();
        })
        .catch((err: Error & { responseCode?: number }) => {
          if (!err.responseCode) log.error({ err }, 'email could not be recorded; the sender will retry');
          // Anything but a refusal: 451 makes the sending server try again later.
          callback(err.responseCode ? err : smtpError(451, '4.3.0 Temporary failure, try again later'));
        });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? listenPort, options.host ?? listenHost, () => resolve());
  });
  server.on('error', (err) => log.error({ err }, 'SMTP listener error'));
  return { port: (server.server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}
