/**
 * RFC 3834 for an assistant that answers mail automatically: which messages it must not answer
 * (other robots, lists, bounces, itself), so two auto-responders never feed each other.
 */
import type { ParsedEmail } from './parse.js';

const robotMailbox = /^(mailer-daemon|postmaster)$/i;
const localPart = (address: string) => (address.includes('@') ? address.slice(0, address.lastIndexOf('@')) : address);

/**
 * Why the message must not be answered automatically, or undefined. `envelopeFrom`: the SMTP MAIL FROM
 * address ('' for the null return path `<>` of bounces); `ownAddress`: EMAIL_ADDRESS.
 */
export function noAutoReplyReason(email: Pick<ParsedEmail, 'from' | 'autoReply'>, envelopeFrom: string | undefined, ownAddress: string | undefined): string | undefined {
  const { autoSubmitted, precedence, listId, returnPath } = email.autoReply;
  // The keyword before any parameters or comment: "auto-replied; owner-email=…", "no (manual)".
  const submitted = autoSubmitted?.split(/[;(\s]/)[0]?.toLowerCase();
  if (submitted && submitted !== 'no') return `Auto-Submitted: ${submitted}`;
  const kind = precedence?.trim().toLowerCase();
  if (kind === 'bulk' || kind === 'list' || kind === 'junk') return `Precedence: ${kind}`;
  if (listId !== undefined) return 'List-Id (a mailing list)';
  if (envelopeFrom === '' || returnPath?.replace(/\s/g, '') === '<>') return 'empty return path (a bounce)';
  for (const address of [email.from, envelopeFrom]) {
    if (!address) continue;
    if (robotMailbox.test(localPart(address))) return `from a mailer daemon (${address})`;
    if (ownAddress && address.toLowerCase() === ownAddress.toLowerCase()) return `from our own address (${address})`;
  }
  return undefined;
}
