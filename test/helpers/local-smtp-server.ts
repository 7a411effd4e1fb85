/**
 * A local SMTP server (smtp-server, plain SMTP on loopback) standing in for the outgoing mail relay:
 * it records each message as delivered (envelope and the raw message parsed by mailparser).
 * `failNext` makes the next DATA commands answer with these SMTP codes.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface DeliveredMail {
  envelope: { from: string; to: string[] };
  raw: string;
  parsed: ParsedMail;
}

export async function startLocalSmtp() {
  const delivered: DeliveredMail[] = [];
  const failures: number[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = failures.shift();
        if (code) return callback(Object.assign(new Error(code >= 500 ? 'rejected' : 'try again later'), { responseCode: code }));
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then((parsed) => {
          delivered.push({
            envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
            raw: raw.toString(),
            parsed,
          });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    delivered,
    failNext: (...codes: number[]) => failures.push(...codes),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
