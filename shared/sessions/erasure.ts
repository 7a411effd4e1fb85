/** Erasing a user: all their data goes in one transaction, and an audit row without personal data stays. */
import { db } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import { insertErasure, type Erasure } from './erasures.store.js';
import { deleteUserData } from './users.store.js';

/** Erases a user (404 when unknown); returns the audit row (pseudonymous subject, counts per table). */
export async function eraseUser(userId: string, requestedBy: string): Promise<Erasure> {
  return db().transaction(async (trx) => {
    const erased = await deleteUserData(trx, userId);
    if (!erased) throw new NotFoundError(`No user ${userId}.`);
    return insertErasure(trx, userId, requestedBy, erased);
  });
}
