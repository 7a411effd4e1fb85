/**
 * Erasing a user: all their data goes in one transaction, each domain deleting its own rows through
 * the eraser it provides (listed below), then the user row; an audit row without personal data
 * stays. Then what lives outside Postgres goes too: the sessions' idempotency claims in Redis, and
 * the sessions' open event streams, which end with a final CONTEXT_UPDATE (session_status closed,
 * reason user_erased) that goes through each session's lane, in its place in the session's order.
 */
import { db } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import { logger } from '../logger.js';
import type { Knex } from 'knex';
import { insertErasure, type Erasure } from './erasures.store.js';
import { deleteUser, lockUserForErasure, type ErasedUser } from './users.store.js';
import { eraseUserSessions } from '../sessions/sessions.store.js';
import { sessionHeadsOfUser } from '../stream/stream.store.js';
import { eraseUserConsents } from './consents.store.js';
import { eraseUserChatappMessages } from '../channels/chatapp/messages.store.js';
import { eraseUserWindows } from '../channels/chatapp/window.store.js';
import { eraseUserChannelMessages } from '../channels/messages.store.js';
import { forgetIdempotencyKeys } from '../stream/idempotency.js';
import { endErasedStreams } from '../stream/index.js';

/**
 * A domain's part of an erasure: deletes the person's rows of its own tables in the erasure's
 * transaction and returns how many went per table (rows cascading from them counted before).
 */
export type UserEraser = (trx: Knex.Transaction, user: ErasedUser) => Promise<Record<string, number>>;

/**
 * Every domain holding a person's data. Messages go by user and by number or address too, as inbound
 * ones may predate the user. Portal records and agent delegations go with the user row (foreign keys).
 */
const erasers: readonly UserEraser[] = [
  eraseUserChatappMessages,
  eraseUserChannelMessages,
  eraseUserWindows,
  eraseUserConsents,
  eraseUserSessions,
];

/** Deletes a user and everything about them in the caller's transaction; rows erased per table, or undefined for no such user. */
async function eraseUserData(trx: Knex.Transaction, userId: string): Promise<Record<string, number> | undefined> {
  const user = await lockUserForErasure(trx, userId);
  if (!user) return undefined;
  const erased: Record<string, number> = { users: 1 };
  for (const erase of erasers) Object.assign(erased, await erase(trx, user));
  await deleteUser(trx, userId);
  return erased;
}

/** The reason of the final event of an erased user's sessions. */
export const ERASED_REASON = 'user_erased';

/** Erases a user (404 when unknown); returns the audit row (pseudonymous subject, counts per table). */
export async function eraseUser(userId: string, requestedBy: string): Promise<Erasure> {
  const { erasure, sessions } = await db().transaction(async (trx) => {
    // Read before the rows go: where each session's stream stands, for its final event.
    const sessions = await sessionHeadsOfUser(trx, userId);
    const erased = await eraseUserData(trx, userId);
    if (!erased) throw new NotFoundError(`No user ${userId}.`);
    return { erasure: await insertErasure(trx, userId, requestedBy, erased), sessions };
  });
  try {
    // Open streams write each session's final event and end (see isFinalEvent); the session is gone
    // from Postgres, so nothing can be replayed after it.
    await endErasedStreams(sessions, ERASED_REASON);
    await forgetIdempotencyKeys(sessions.map((s) => s.session_id));
  } catch (err) {
    // The erasure stands (Postgres is the record); the claims expire within 24 hours by themselves,
    // and a stream left open serves nothing more (its session is gone).
    logger('sessions').error({ err, erasure_id: erasure.erasure_id, sessions: sessions.length }, 'user erased, but Redis could not be cleaned up: idempotency claims left to expire, streams not ended');
  }
  return erasure;
}
