/**
 * The relay URL's token: /voice/incoming, having checked Twilio's signature and the caller, issues a
 * token for that call, signed, expiring after VOICE_RELAY_TOKEN_SECONDS, and usable once. What it is
 * bound to (CallSid, From, To, and whether Twilio reported the caller's number fully attested) is
 * kept in Redis under the token's nonce, not in the URL, so no phone number lands in access logs.
 * The relay upgrade must carry it (a fixed URL signed once would let one captured header open any
 * number of calls), and the relay's `setup` must name the same call, so a socket cannot claim
 * another caller's number.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { config } from '../../config.js';
import { commandRedis } from '../../redis.js';
import { z } from '../../zod.js';

export interface RelayBinding {
  callSid: string;
  from: string;
  to: string;
  /** Twilio reported StirVerstat TN-Validation-Passed-A for this call. */
  attestedA: boolean;
}

const bindingSchema = z.object({ callSid: z.string(), from: z.string(), to: z.string(), attestedA: z.boolean() });

/** The signing key: derived from the Twilio auth token the voice channel needs anyway, for this one use. */
const key = () => createHmac('sha256', config().channels.twilio.authToken).update('switchboard voice relay token').digest();
const sign = (nonce: string) => createHmac('sha256', key()).update(nonce).digest('base64url');
const prefix = () => `${config().queues.prefix}:voice`;
const redis = () => commandRedis('voice');

/** A token for one call, to carry in the relay URL; its binding waits in Redis until used or expired. */
export async function issueRelayToken(binding: RelayBinding): Promise<string> {
  const nonce = randomBytes(18).toString('base64url');
  await redis().set(`${prefix()}:relay-token:${nonce}`, JSON.stringify(binding), 'EX', config().channels.voice.relayTokenSeconds);
  return `${nonce}.${sign(nonce)}`;
}

/** The nonce of a token whose signature is ours, or undefined (a made-up or altered token never reaches Redis). */
export function relayTokenNonce(token: string): string | undefined {
  const [nonce, mac, extra] = token.split('.');
  if (!nonce || !mac || extra !== undefined) return undefined;
  const expected = Buffer.from(sign(nonce));
  const given = Buffer.from(mac);
  return expected.length === given.length && timingSafeEqual(expected, given) ? nonce : undefined;
}

export type RelayClaim = { ok: true; binding: RelayBinding } | { ok: false; reason: 'used_or_expired' | 'too_many_sockets'; callSid?: string };

/**
 * Uses a token once (GETDEL of its binding: a second use, or one after VOICE_RELAY_TOKEN_SECONDS,
 * finds nothing) and counts the call's sockets against VOICE_MAX_SOCKETS_PER_CALL. Held in Redis so
 * it holds across API processes.
 */
export async function claimRelayToken(nonce: string): Promise<RelayClaim> {
  const stored = await redis().getdel(`${prefix()}:relay-token:${nonce}`);
  const parsed = stored ? bindingSchema.safeParse(JSON.parse(stored)) : undefined;
  if (!parsed?.success) return { ok: false, reason: 'used_or_expired' };
  const binding = parsed.data;
  const socketsKey = `${prefix()}:relay-sockets:${binding.callSid}`;
  const [[, sockets]] = (await redis().multi().incr(socketsKey).expire(socketsKey, 24 * 3600).exec()) as [[unknown, number], unknown];
  if (sockets > config().channels.voice.maxSocketsPerCall) return { ok: false, reason: 'too_many_sockets', callSid: binding.callSid };
  return { ok: true, binding };
}
