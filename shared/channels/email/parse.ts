/** Inbound email as the channel needs it: parsed with `mailparser`, the new text without the quoted history. */
import { createHash } from 'node:crypto';
import type { AddressObject } from 'mailparser';
import { loadOnFirstUse } from '../../load-on-first-use.js';

/** Loaded by the email role when mail arrives: the web and worker roles, which import this module for replies, never hold it. */
const mailparser = loadOnFirstUse<typeof import('mailparser')>('mailparser');

export interface ParsedEmail {
  /** The Message-ID (angle brackets kept), or a digest of the message when it has none. */
  messageId: string;
  from: string | undefined;
  to: string[];
  subject: string;
  /** In-Reply-To and References, oldest first. */
  references: string[];
  inReplyTo: string | undefined;
  /** The plain text (or the HTML's text), quoted history and signature stripped. */
  text: string;
  /** The Authentication-Results header values, top-most first (the order the MXs prepended them in reverse). */
  authenticationResults: string[];
  /** What RFC 3834 looks at before answering automatically: the first of each header, unfolded. */
  autoReply: { autoSubmitted?: string; precedence?: string; listId?: string; returnPath?: string };
}

/** The unfolded values of one header field, in the message's order (top-most first). */
const headerValues = (lines: ReadonlyArray<{ key: string; line: string }>, name: string) =>
  lines.filter((l) => l.key === name).map((l) => l.line.slice(l.line.indexOf(':') + 1).replace(/\r?\n[ \t]/g, ' ').trim());

const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address?.toLowerCase())).filter((a): a is string => Boolean(a));

/**
 * The new part of a reply: everything before the first line that opens the quoted history
 * ("On … wrote:", "-----Original Message-----", Outlook's "From: …" block, a run of "> " lines) and
 * before a signature separator ("-- ").
 */
export function stripQuoted(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const joined = `${line} ${lines[i + 1] ?? ''}`;
    if (/^\s*>/.test(line)) break;
    if (/^\s*On\b.*\bwrote:\s*$/i.test(line) || /^\s*On\b.*\bwrote:\s*$/i.test(joined.trim())) break;
    if (/^\s*-{2,}\s*Original Message\s*-{2,}/i.test(line)) break;
    if (/^\s*_{5,}\s*$/.test(line) && /^\s*From:/i.test(lines[i + 1] ?? '')) break;
    if (/^\s*From:\s.+/i.test(line) && /^\s*(Sent|Date):\s/i.test(lines[i + 1] ?? '')) break;
    if (line === '-- ' || line === '--') break;
    kept.push(line);
  }
  return kept.join('\n').trim();
}

/** Parses a raw message (RFC 5322) with mailparser. */
export async function parseEmail(raw: Buffer): Promise<ParsedEmail> {
  const mail = await mailparser().simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  const refs = typeof mail.references === 'string' ? [mail.references] : (mail.references ?? []);
  const first = (name: string) => headerValues(mail.headerLines, name)[0];
  return {
    messageId: mail.messageId ?? `<${createHash('sha256').update(raw).digest('hex')}@no-message-id>`,
    from: addresses(mail.from)[0],
    to: addresses(mail.to),
    subject: mail.subject ?? '',
    references: refs,
    inReplyTo: mail.inReplyTo,
    text: stripQuoted(mail.text ?? ''),
    authenticationResults: headerValues(mail.headerLines, 'authentication-results'),
    autoReply: { autoSubmitted: first('auto-submitted'), precedence: first('precedence'), listId: first('list-id'), returnPath: first('return-path') },
  };
}

/** The thread an email belongs to: the first message of its References, else the one it replies to, else itself. */
export const threadRoot = (email: Pick<ParsedEmail, 'references' | 'inReplyTo' | 'messageId'>) => email.references[0] ?? email.inReplyTo ?? email.messageId;

/** "Re: " before a subject unless it has one. */
export const replySubject = (subject: string) => (/^\s*re:/i.test(subject) ? subject : `Re: ${subject || '(no subject)'}`);
