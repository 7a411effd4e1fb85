/**
 * The voice PIN: what proves a caller is the person and not only their number (caller ID is
 * spoofable). Set in the portal, kept as a salted scrypt hash; on a call it is said or keyed
 * (`*` digits `#`), at most LIMIT_VOICE_PIN_ATTEMPTS tries per person per hour, right or wrong.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { NotFoundError, ValidationError } from '../errors.js';
import { takeLimit } from '../limits.js';
import { setVoicePinHash, voicePinHashOf } from './users.store.js';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** 4 to 12 digits: what a keypad can enter and a caller can say. */
export const VOICE_PIN_PATTERN = /^\d{4,12}$/;

async function hashPin(pin: string, salt = randomBytes(16)): Promise<string> {
  return `scrypt$${salt.toString('base64url')}$${(await scryptAsync(pin, salt, 32)).toString('base64url')}`;
}

async function samePin(stored: string, pin: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const given = Buffer.from((await hashPin(pin, Buffer.from(salt, 'base64url'))).split('$')[2]!, 'base64url');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Sets a person's PIN (null removes it); a malformed PIN is a 400 naming body.pin. */
export async function setVoicePin(userId: string, pin: string | null): Promise<void> {
  if (pin !== null && !VOICE_PIN_PATTERN.test(pin)) throw new ValidationError('The PIN is invalid.', [{ path: 'body.pin', message: 'must be 4 to 12 digits' }]);
  if (!(await setVoicePinHash(userId, pin === null ? null : await hashPin(pin)))) throw new NotFoundError(`No user ${userId}.`);
}

/** Whether the person has a PIN set. */
export async function hasVoicePin(userId: string): Promise<boolean> {
  return Boolean(await voicePinHashOf(userId));
}

/** Checks a PIN said or keyed on a call; every try counts against the limit (TooManyRequestsError past it). */
export async function checkVoicePin(userId: string, pin: string): Promise<boolean> {
  await takeLimit('voicePinAttempts', userId);
  const stored = await voicePinHashOf(userId);
  return Boolean(stored) && (await samePin(stored!, pin));
}
