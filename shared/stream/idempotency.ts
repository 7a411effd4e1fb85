/**
 * Idempotency of a message (a client's Idempotency-Key, or a key a worker derives so its retry
 * publishes nothing twice). Three guards, in the order a message meets them:
 * 1. on acceptance, the persisted message of the key (session_messages, while it is in the history);
 * 2. on acceptance, a Redis claim held for 24 hours: covers the time between acceptance and
 *    persistence, and a key whose message was trimmed out of the history;
 * 3. on append, the unique index on (session_id, idempotency_key): two appends of one key that got
 *    past both (the claim expired) end as a 'duplicate-key' outcome, not as an error.
 */
import type { Knex } from 'knex';
import { config } from '../config.js';
import { isUniqueViolation } from '../db/index.js';
import { commandRedis } from '../redis.js';
import { messageByIdempotencyKey } from '../sessions/messages.store.js';
import { appendMessages, type AppendMessage, type AppendOutcome } from './stream.store.js';

const redis = () => commandRedis('sessions');

const idempotencyTtlSeconds = 24 * 3600;
const idempotencyRedisKey = (sessionId: string, key: string) => `${config().queues.prefix}:sessions:idem:${sessionId}:${key}`;

/** Escapes Redis glob characters, so a prefix is matched literally by SCAN MATCH. */
const globLiteral = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Deletes every idempotency claim of the sessions (user erasure: the keys name the user's messages).
 * Found by SCAN over the key pattern: erasures are rare, and the hot path keeps one key per claim.
 */
export async function forgetIdempotencyKeys(sessionIds: string[]): Promise<number> {
  let deleted = 0;
  for (const sessionId of sessionIds) {
    const match = `${globLiteral(idempotencyRedisKey(sessionId, ''))}*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis().scan(cursor, 'MATCH', match, 'COUNT', 1000);
      if (keys.length) deleted += await redis().unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return deleted;
}

/** The unique index that refuses a second message of a key in a session. */
const keyIndex = 'session_messages_session_id_idempotency_key_unique';

/**
 * The first message of an idempotency key, or undefined when the key is new: then it is claimed for
 * `messageId` (guards 1 and 2). A first message not yet persisted has a null sequence.
 */
export async function firstForKey(sessionId: string, key: string, messageId: string): Promise<{ message_id: string; sequence: number | null } | undefined> {
  const persisted = await messageByIdempotencyKey(sessionId, key);
  if (persisted) return persisted;
  const redisKey = idempotencyRedisKey(sessionId, key);
  const claimed = await redis().set(redisKey, messageId, 'EX', idempotencyTtlSeconds, 'NX');
  if (claimed === 'OK') return undefined;
  const first = await redis().get(redisKey);
  return first ? { message_id: first, sequence: null } : undefined;
}

/** Gives up the claim of a key that `messageId` holds (its message was refused or never enqueued), so a retry is a new message. */
export async function releaseKey(sessionId: string, key: string, messageId: string): Promise<void> {
  await redis().eval(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, 1, idempotencyRedisKey(sessionId, key), messageId);
}

export type KeyedAppendOutcome = AppendOutcome | { kind: 'duplicate-key' };

/** Appends one message (see appendMessages); a second message of a key is reported, not thrown (guard 3). */
export async function appendMessageOnce(m: AppendMessage, maxHistory: number, k?: Knex): Promise<KeyedAppendOutcome> {
  try {
    const [outcome] = await appendMessages([m], maxHistory, k);
    return outcome!;
  } catch (err) {
    if (isUniqueViolation(err, keyIndex)) return { kind: 'duplicate-key' };
    throw err;
  }
}
