/**
 * Erasing a user: all their data goes in one transaction, and an audit row without personal data
 * stays. Then what lives outside Postgres goes too: the sessions' idempotency claims in Redis, and
 * the sessions' open event streams, which end with a final CONTEXT_UPDATE (session_status closed,
 * reason user_erased) published on the bus.
 */
import { randomUUID } from 'node:crypto';
import { db } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import { publishEvent } from '../bus.js';
import { logger } from '../logger.js';
import { insertErasure, type Erasure } from './erasures.store.js';
import { deleteUserData } from './users.store.js';
import { sessionHeadsOfUser } from './sessions.store.js';
import { forgetIdempotencyKeys } from '../stream/idempotency.js';

/** The reason of the final event of an erased user's sessions. */
export const ERASED_REASON = 'user_erased';

/** Erases a user (404 when unknown); returns the audit row (pseudonymous subject, counts per table). */
export async function eraseUser(userId: string, requestedBy: string): Promise<Erasure> {
  const { erasure, sessions } = await db().transaction(async (trx) => {
    // Read before the rows go: where each session's stream stands, for its final event.
    const sessions = await sessionHeadsOfUser(trx, userId);
    const erased = await deleteUserData(trx, userId);
    if (!erased) throw new NotFoundError(`No user ${userId}.`);
    return { erasure: await insertErasure(trx, userId, requestedBy, erased), sessions };
  });
  try {
    await forgetIdempotencyKeys(sessions.map((s) => s.session_id));
    // The next position of each stream: open streams write it and end (see isFinalEvent); the
    // session is gone from Postgres, so nothing can be replayed after it.
    for (const s of sessions) {
      await publishEvent({
        id: randomUUID(),
        sequence: s.last_seq + 1,
        event_type: 'CONTEXT_UPDATE',
        session_id: s.session_id,
        channel: s.last_channel ?? 'chat',
        data: { session_status: 'closed', reason: ERASED_REASON },
      });
    }
  } catch (err) {
    // The erasure stands (Postgres is the record); the claims expire within 24 hours by themselves,
    // and a stream left open serves nothing more (its session is gone).
    logger('sessions').error({ err, erasure_id: erasure.erasure_id, sessions: sessions.length }, 'user erased, but Redis could not be cleaned up: idempotency claims left to expire, streams not ended');
  }
  return erasure;
}
