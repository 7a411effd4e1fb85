/**
 * The inbound SMTP listener of the email channel (`smtp-server`; the email role). Chosen over a
 * provider's inbound webhook: any MX or relay can deliver to it (no provider lock-in), the message
 * arrives whole (headers for threading, Authentication-Results), and SMTP's own answers tell the
 * sender's server to retry (451) or give up (550) — nothing is accepted and then lost. It accepts mail
 * only for EMAIL_ADDRESS, from the hosts in EMAIL_RELAYS, parses it with mailparser, records it once
 * per Message-ID and queues it. TLS and sender checks (SPF, DKIM, DMARC) belong to the MX in front;
 * with EMAIL_TRUSTED_AUTHSERV_ID the listener requires that MX's verdict on From: (sender-auth.ts).
 */
import { createHash } from 'node:crypto';
import { BlockList, isIP, type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import { config, ConfigError } from '../../config.js';
import { TooManyRequestsError } from '../../errors.js';
import { takeLimit } from '../../limits.js';
import { logger } from '../../logger.js';
import { acceptInbound } from '../pipeline.js';
import { noAutoReplyReason } from './auto-reply.js';
import { EMAIL } from './email.adapter.js';
import { parseEmail, threadRoot, type ParsedEmail } from './parse.js';
import { senderVerdict } from './sender-auth.js';

/** An SMTP answer with its code (smtp-server sends `responseCode` and the message). */
const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

/** The one answer a refused sender gets: nothing of why, nothing the model wrote. */
export const NOT_AUTHENTICATED = '5.7.1 Sender not authenticated: this mailbox takes only mail its MX verified (DMARC, or DKIM aligned with From:)';

/**
 * The message, or undefined once it passed SIZE: from then on the rest of the DATA is read and dropped,
 * so memory holds at most SIZE and one chunk whatever the client sends; smtp-server answers 552 at its end.
 */
async function readWithin(stream: SMTPServerDataStream): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    if (stream.sizeExceeded) chunks.length = 0;
    else chunks.push(chunk as Buffer);
  }
  return stream.sizeExceeded ? undefined : Buffer.concat(chunks);
}

/** Why the listener may not start: in production From: is proven by the MX, and only listed hosts deliver. */
export function emailListenerProblems(): string[] {
  const { trustedAuthservId, relays } = config().channels.email;
  if (!config().isProduction) return [];
  return [
    !trustedAuthservId && 'EMAIL_TRUSTED_AUTHSERV_ID: required by the email role when NODE_ENV=production (the MX in front proves From:)',
    !relays?.length && 'EMAIL_RELAYS: required by the email role when NODE_ENV=production (only the MX and relays may deliver)',
  ].filter((p): p is string => Boolean(p));
}

/** EMAIL_RELAYS as a lookup, or undefined when any host may deliver (development). */
function relayList(relays: string[] | undefined): BlockList | undefined {
  if (!relays?.length) return undefined;
  const list = new BlockList();
  for (const relay of relays) {
    const [address = '', bits] = relay.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** The SMTP envelope of a message: MAIL FROM ('' for the null return path of bounces). */
export interface Envelope {
  mailFrom?: string;
}

/**
 * Records one received message; throws an SMTP answer for what must be refused. A sender the trusted MX
 * does not vouch for is recorded as refused with the reason, and never queued: the model never sees it.
 */
export async function receiveEmail(raw: Buffer, envelope: Envelope = {}): Promise<{ duplicate: boolean; email: ParsedEmail }> {
  const { address, trustedAuthservId } = config().channels.email;
  const email = await parseEmail(raw);
  if (!email.from) throw smtpError(550, '5.1.7 The message has no sender address');
  const record = {
    channel: EMAIL,
    provider_message_id: email.messageId,
    remote_address: email.from,
    local_address: address ?? email.to[0] ?? null,
    thread_ref: threadRoot(email),
    body: email.text || `[no text] ${email.subject}`.trim(),
    payload: { from: email.from, to: email.to, subject: email.subject, message_id: email.messageId, in_reply_to: email.inReplyTo ?? null, references: email.references },
    metadata: { subject: email.subject, references: email.references, in_reply_to: email.inReplyTo ?? null },
  };
  if (trustedAuthservId) {
    const verdict = senderVerdict(email.authenticationResults, trustedAuthservId, email.from);
    if (!verdict.ok) {
      // Keyed by the message's digest, not its Message-ID: a forgery cannot claim a genuine message's id first.
      await acceptInbound({ ...record, provider_message_id: `refused:${createHash('sha256').update(raw).digest('hex')}`, refused: `sender not authenticated: ${verdict.reason}` });
      logger('channels.email').warn({ message_id: email.messageId, from: email.from, reason: verdict.reason }, 'email refused: sender not authenticated');
      throw smtpError(550, NOT_AUTHENTICATED);
    }
  }
  // Counted once the sender is proven, so a forger cannot spend someone else's allowance.
  try {
    await takeLimit('emailMessagesPerSender', email.from);
  } catch (err) {
    if (!(err instanceof TooManyRequestsError)) throw err;
    throw smtpError(451, `4.7.1 Too many messages from ${email.from}; try again in ${err.retryAfterSeconds} s`);
  }
  const noReply = noAutoReplyReason(email, envelope.mailFrom, address);
  const { duplicate } = await acceptInbound({ ...record, metadata: { ...record.metadata, ...(noReply ? { no_reply: noReply } : {}) } });
  return { duplicate, email };
}

/** Starts the listener on EMAIL_LISTEN_HOST:EMAIL_LISTEN_PORT (or the given port); resolves with its address and a close function. */
export async function startEmailListener(options: { port?: number; host?: string } = {}): Promise<{ port: number; close: () => Promise<void> }> {
  const problems = emailListenerProblems();
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  const { address, listenPort, listenHost, maxBytes, relays, maxClients } = config().channels.email;
  const log = logger('channels.email');
  const mailbox = address?.toLowerCase();
  const relayHosts = relayList(relays);
  const server = new SMTPServer({
    name: address?.split('@')[1],
    banner: 'switchboard email channel',
    authOptional: true,
    // Plain SMTP behind the MX (which terminates TLS); no login: the listener relays nothing.
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    maxClients,
    logger: false,
    onConnect(session, callback) {
      const remote = session.remoteAddress;
      if (relayHosts && !relayHosts.check(remote, isIP(remote) === 6 ? 'ipv6' : 'ipv4')) {
        log.warn({ remote }, 'SMTP connection refused: not in EMAIL_RELAYS');
        return callback(smtpError(554, `5.7.1 ${remote} may not deliver here (not a relay of this listener)`));
      }
      takeLimit('emailConnections', remote).then(
        () => callback(),
        (err: Error) => {
          if (!(err instanceof TooManyRequestsError)) log.error({ err }, 'SMTP connection limit could not be checked');
          const wait = err instanceof TooManyRequestsError ? `Too many connections from ${remote}; try again in ${err.retryAfterSeconds} s` : 'Temporary failure, try again later';
          callback(smtpError(421, `4.7.0 ${wait}`));
        },
      );
    },
    onRcptTo(rcpt, _session, callback) {
      if (rcpt.address.toLowerCase() !== mailbox) return callback(smtpError(550, `5.1.1 <${rcpt.address}>: no such mailbox here`));
      callback();
    },
    onData(stream, session, callback) {
      readWithin(stream)
        .then(async (raw) => {
          if (!raw) throw smtpError(552, `5.3.4 Message larger than ${maxBytes} bytes`);
          const { duplicate, email } = await receiveEmail(raw, { mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined });
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
