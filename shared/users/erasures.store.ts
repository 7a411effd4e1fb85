/** Query module of `user_erasures`: one audit row per erased user, without personal data. */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { db } from '../db/index.js';

const TABLE = 'user_erasures';

export interface Erasure {
  erasure_id: string;
  subject_hash: string;
  requested_by: string;
  erased: Record<string, number>;
  erased_at: string;
}

const toDomain = (r: Omit<Erasure, 'erased_at'> & { erased_at: Date }): Erasure => ({ ...r, erased_at: r.erased_at.toISOString() });

/** The pseudonymous subject of an erasure: SHA-256 of the user id. */
export const subjectHash = (userId: string) => createHash('sha256').update(userId).digest('hex');

export async function insertErasure(k: Knex, userId: string, requestedBy: string, erased: Record<string, number>): Promise<Erasure> {
  const [row] = await k(TABLE).insert({ subject_hash: subjectHash(userId), requested_by: requestedBy, erased: JSON.stringify(erased) }).returning(['erasure_id', 'subject_hash', 'requested_by', 'erased', 'erased_at']);
  return toDomain(row);
}

/** The erasure of a user id, if it was erased. */
export async function findErasure(userId: string): Promise<Erasure | undefined> {
  const row = await db()(TABLE).where({ subject_hash: subjectHash(userId) }).first(['erasure_id', 'subject_hash', 'requested_by', 'erased', 'erased_at']);
  return row && toDomain(row);
}
