/**
 * Query module of `phone_verifications`: the one code per user waiting to prove a phone number,
 * kept as the SHA-256 of its id and the code (null when no code can match).
 */
import type { Knex } from 'knex';
import { createHash } from 'node:crypto';
import { db } from '../db/index.js';

const TABLE = 'phone_verifications';

export interface PhoneVerification {
  verification_id: string;
  user_id: string;
  phone_number: string;
  code_hash: string | null;
  expires_at: Date;
}

/** The stored form of a code: salted by its verification, so equal codes of two requests differ at rest. */
export const codeHash = (verificationId: string, code: string) => createHash('sha256').update(`${verificationId}:${code}`).digest('hex');

/** Replaces the user's waiting verification with a new one for `phone`, valid `minutes`; `code` null: nothing will match. */
export async function replaceVerification(input: { verification_id: string; user_id: string; phone_number: string; code: string | null; minutes: number }): Promise<PhoneVerification> {
  const k = db();
  const row = {
    verification_id: input.verification_id,
    user_id: input.user_id,
    phone_number: input.phone_number,
    code_hash: input.code === null ? null : codeHash(input.verification_id, input.code),
    expires_at: k.raw(`now() + make_interval(mins => ?)`, [input.minutes]),
  };
  const [saved] = (await k(TABLE).insert(row).onConflict('user_id').merge().returning(['verification_id', 'user_id', 'phone_number', 'code_hash', 'expires_at'])) as PhoneVerification[];
  return saved!;
}

/** The user's unexpired verification, locked in the caller's transaction until it is used (deleted) or the transaction ends. */
export async function lockVerification(trx: Knex.Transaction, userId: string): Promise<PhoneVerification | undefined> {
  return (await trx(TABLE)
    .where({ user_id: userId })
    .where('expires_at', '>', trx.fn.now())
    .forUpdate()
    .first(['verification_id', 'user_id', 'phone_number', 'code_hash', 'expires_at'])) as PhoneVerification | undefined;
}

/** Deletes the user's verification (used, or replaced by a change of number). */
export async function deleteVerification(trx: Knex | Knex.Transaction, userId: string): Promise<void> {
  await trx(TABLE).where({ user_id: userId }).delete();
}
