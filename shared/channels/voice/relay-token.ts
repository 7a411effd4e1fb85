/**
 * The relay URL's token: /voice/incoming, having checked Twilio's signature and the caller, issues a
 * token bound to that call (CallSid, From, To, and whether Twilio reported the caller's number fully
 * attested), signed, expiring after VOICE_RELAY_TOKEN_SECONDS, and usable once. The relay upgrade
 * must carry it (a fixed URL signed once would let one captured header open any number of calls),
 * and the relay's `setup` must name the same call, so a socket cannot claim another caller's number.
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

const payloadSchema = z.object({ c: z.string(), f: z.string(), t: z.string(), a: z.boolean(), e: z.number().int(), n: z.string() });

/** The signing key: derived from the Twilio auth token the voice channel needs anyway, for this one use. */
const key = () => createHmac('sha256', config().channels.twilio.authToken).update('switchboard voice relay token').digest();
const sign = (body: string) => createHmac('sha256', key()).update(body).digest('base64url');

/** A token for one call, to carry in the relay URL. */
export function issueRelayToken(binding: RelayBinding, nowMs = Date.now()): string {
  const expires = Math.floor(nowMs / 1000) + config().channels.voice.relayTokenSeconds;
  const body = Buffer.from(JSON.stringify({ c: binding.callSid, f: binding.from, t: binding.to, a: binding.attestedA, e: expires, n: randomBytes(12).toString('base64url') })).toString('base64url');
  return `${body}.${sign(body)}`;
}

/** The call a token is bound to and its nonce, or undefined when it is malformed, not ours or expired. */
export function readRelayToken(token: string, nowMs = Date.now()): (RelayBinding & { nonce: string; expires: number }) | undefined {
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined) return undefined;
  const expected = Buffer.from(sign(body));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  let parsed;
  try {
    parsed = payloadSchema.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    return undefined;
  }
  if (!parsed.success || parsed.data.e * 1000 <= nowMs) return undefined;
  const p = parsed.data;
  return { callSid: p.c, from: p.f, to: p.t, attestedA: p.a, nonce: p.n, expires: p.e };
}

export type RelayClaim = 'ok' | 'used' | 'too_many_sockets';

/**
 * Uses a token once (SET NX on its nonce, kept until it expires) and counts the call's sockets
 * against VOICE_MAX_SOCKETS_PER_CALL. Held in Redis so it holds across API processes.
 */
export async function claimRelayToken(token: { callSid: string; nonce: string; expires: number }): Promise<RelayClaim> {
  const redis = commandRedis('voice');
  const prefix = `${config().queues.prefix}:voice`;
  const ttl = Math.max(1, token.expires - Math.floor(Date.now() / 1000));
  if ((await redis.set(`${prefix}:relay-token:${token.nonce}`, token.callSid, 'EX', ttl, 'NX')) !== 'OK') return 'used';
  const socketsKey = `${prefix}:relay-sockets:${token.callSid}`;
  const [[, sockets]] = (await redis.multi().incr(socketsKey).expire(socketsKey, 24 * 3600).exec()) as [[unknown, number], unknown];
  return sockets > config().channels.voice.maxSocketsPerCall ? 'too_many_sockets' : 'ok';
}
