/**
 * Slack's request signing, as Slack documents it: X-Slack-Signature is `v0=` + HMAC-SHA256 (hex) of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}` keyed by the app's signing secret; a timestamp more
 * than five minutes from now is refused (a captured request cannot be replayed later).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ForbiddenError, ValidationError } from '../../errors.js';

export const SLACK_TIMESTAMP_WINDOW_SECONDS = 300;

/** The signature Slack sends for a body at a timestamp (tests sign with it too). */
export function slackSignature(signingSecret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

/** Verifies a request: a header missing → 400; a stale timestamp or a wrong signature → 403. */
export function verifySlackRequest(signingSecret: string, headers: { signature?: string; timestamp?: string }, body: string, nowSeconds = Math.floor(Date.now() / 1000)): void {
  const missing = [!headers.signature && 'headers.x-slack-signature', !headers.timestamp && 'headers.x-slack-request-timestamp'].filter((p): p is string => Boolean(p));
  if (missing.length) throw new ValidationError('The Slack signature headers are missing.', missing.map((path) => ({ path, message: 'required' })));
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > SLACK_TIMESTAMP_WINDOW_SECONDS) {
    throw new ForbiddenError('X-Slack-Request-Timestamp is more than five minutes from now: the request is refused as a possible replay.');
  }
  const expected = Buffer.from(slackSignature(signingSecret, headers.timestamp!, body));
  const given = Buffer.from(headers.signature!);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new ForbiddenError('The X-Slack-Signature does not match this request.');
}
