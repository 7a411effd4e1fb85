/**
 * Proven phone numbers. The messaging channels find a person by phone number, so a number is set on
 * an account only once a one-time code sent to it has been entered: asking sends a code (messaging
 * app, else SMS) and stores its hash; entering it sets the number. Until then the number routes
 * nothing. A number another account has gets the same answer as a free one, but no code is sent and
 * nothing can match, so the answers never tell which numbers are registered.
 */
import { randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { config } from '../config.js';
import { ValidationError } from '../errors.js';
import { enqueue } from '../queues.js';
import { takeLimit } from '../limits.js';
import { db, isUniqueViolation } from '../db/index.js';
import { chatappClient, describeProviderError, isTransientProviderError, sendSms, type ProviderReceipt } from '../clients/twilio.js';
import { chatappMissingSettings, providerAddress } from '../channels/chatapp/outbound.js';
import { windowOpen } from '../channels/chatapp/window.store.js';
import { findUserByPhone, getProfile, setPhoneNumber } from '../users/users.store.js';
import type { Profile } from '../users/users.schemas.js';
import { codeHash, deleteVerification, lockVerification, replaceVerification } from '../users/phone-verifications.store.js';

/** The approved messaging-app template (CHATAPP_TEMPLATE_SIDS `phone_verification=HX…`) a code goes out in; its one variable is the code. */
export const PHONE_CODE_TEMPLATE = 'phone_verification';

export interface CodeSent {
  status: 'code_sent';
  phone: string;
  expires_at: string;
}

/**
 * Starts proving `phone` for a user: 202-style answer, the same whoever has the number. Replaces the
 * user's previous code; LIMIT_PHONE_CODES_PER_HOUR per person, and per number and over everyone
 * (LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR, LIMIT_PHONE_CODES_TOTAL_PER_HOUR), so many accounts can
 * neither flood one phone nor run up the messaging bill.
 */
export async function requestPhoneCode(userId: string, phone: string): Promise<CodeSent> {
  await takeLimit('phoneCodes', userId);
  await takeLimit('phoneCodesPerNumber', phone);
  await takeLimit('phoneCodesTotal', 'all');
  const owner = await findUserByPhone(phone);
  const provable = !owner || owner.user_id === userId;
  const code = provable ? String(randomInt(0, 1_000_000)).padStart(6, '0') : null;
  const verificationId = randomUUID();
  const saved = await replaceVerification({ verification_id: verificationId, user_id: userId, phone_number: phone, code, minutes: config().phoneCodeTtlMinutes });
  // Enqueued for either kind of number, so the answer takes the same path and time.
  await enqueue('portal.phone-code', { verification_id: verificationId, phone_number: phone, code });
  return { status: 'code_sent', phone, expires_at: saved.expires_at.toISOString() };
}

/** The one answer to a code that does not prove the number: wrong, expired, used, never sent, or the number is another account's. */
const notProven = () =>
  new ValidationError('The code is wrong or has expired; ask for a new one with POST /api/portal/profile/phone.', [{ path: 'body.code', message: 'is wrong or has expired' }]);

const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

/**
 * Enters a code: the right one, unexpired, sets the number on the profile (once: the code is used up)
 * and the messaging-app windows follow the change. LIMIT_PHONE_CODE_ATTEMPTS per person per
 * PHONE_CODE_TTL_MINUTES, right or wrong.
 */
export async function verifyPhoneCode(userId: string, code: string): Promise<Profile> {
  await takeLimit('phoneCodeAttempts', userId);
  let proven: boolean;
  try {
    proven = await db().transaction(async (trx) => {
      const waiting = await lockVerification(trx, userId);
      const given = codeHash(waiting?.verification_id ?? randomUUID(), code);
      if (!waiting?.code_hash || !sameHash(waiting.code_hash, given)) return false;
      await deleteVerification(trx, userId);
      await setPhoneNumber(trx, userId, waiting.phone_number);
      return true;
    });
  } catch (err) {
    // Taken by another account since the code was sent: answered like any code that proves nothing.
    if (isUniqueViolation(err)) throw notProven();
    throw err;
  }
  if (!proven) throw notProven();
  return getProfile(userId);
}

/** A code no channel can deliver, or one the provider refused: asking again is the way on. */
export class PhoneCodeUndeliverable extends Error {}

const codeText = (code: string) =>
  `Your switchboard verification code is ${code}. It expires in ${config().phoneCodeTtlMinutes} minutes. If you did not ask for it, ignore this message.`;

/**
 * Sends a code (the portal.phone-code job) through the channel clients: the messaging app with the
 * approved template when one is configured, or as text while the number's 24-hour window is open;
 * else SMS when SMS_FROM_NUMBER is set. Nothing is sent for a number another account has (code null).
 */
export async function deliverPhoneCode(job: { phone_number: string; code: string | null }): Promise<{ channel: 'chatapp' | 'sms' | 'none'; sid?: string }> {
  const { phone_number: phone, code } = job;
  if (code === null) return { channel: 'none' };
  const chatapp = chatappMissingSettings().length === 0;
  const templateSid = config().chatapp.templateSids[PHONE_CODE_TEMPLATE];
  let receipt: ProviderReceipt;
  try {
    if (chatapp && templateSid) {
      receipt = await chatappClient().send({ to: providerAddress(phone), contentSid: templateSid, contentVariables: { 1: code } });
      return { channel: 'chatapp', sid: receipt.sid };
    }
    if (chatapp && (await windowOpen(phone))) {
      receipt = await chatappClient().send({ to: providerAddress(phone), body: codeText(code) });
      return { channel: 'chatapp', sid: receipt.sid };
    }
  } catch (err) {
    if (isTransientProviderError(err)) throw err;
    throw new PhoneCodeUndeliverable(`The messaging-app provider refused the code: ${describeProviderError(err)}`);
  }
  const smsFrom = config().channels.sms.from;
  if (!smsFrom) {
    throw new PhoneCodeUndeliverable(
      `No channel can reach this number: set CHATAPP_TEMPLATE_SIDS ${PHONE_CODE_TEMPLATE}=HX… (an approved template; outside the 24-hour window only templates go out) or SMS_FROM_NUMBER.`,
    );
  }
  try {
    const sms = await sendSms({ from: smsFrom, to: phone, body: codeText(code) });
    return { channel: 'sms', sid: sms.sid };
  } catch (err) {
    if (isTransientProviderError(err)) throw err;
    throw new PhoneCodeUndeliverable(`The SMS provider refused the code: ${describeProviderError(err)}`);
  }
}
