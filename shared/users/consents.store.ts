/** Query module of `channel_consents`: per user and channel type, opt-in and proactive-message permission. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { ValidationError } from '../errors.js';
import type { Channel } from '../sessions/sessions.schemas.js';
import type { Consent } from './users.schemas.js';
import { assertUserExists } from './users.store.js';

const TABLE = 'channel_consents';
const COLUMNS: string[] = [
  'consent_id', 'user_id', 'channel_type', 'opted_in', 'opted_in_at', 'opted_out_at', 'consent_source',
  'proactive_allowed', 'proactive_allowed_at', 'created_at', 'updated_at',
];

type Timestamps = 'opted_in_at' | 'opted_out_at' | 'proactive_allowed_at' | 'created_at' | 'updated_at';
/** A stored consent (or the defaults: not opted in, no proactive messages, consent_id null). */
type ConsentRow = Omit<Consent, Timestamps> & { [K in Timestamps]: Date | null };

const iso = (d: Date | null) => d?.toISOString() ?? null;
const toDomain = (row: ConsentRow): Consent => ({
  ...row,
  opted_in_at: iso(row.opted_in_at),
  opted_out_at: iso(row.opted_out_at),
  proactive_allowed_at: iso(row.proactive_allowed_at),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

const defaults = (userId: string, channelType: Channel): ConsentRow => ({
  consent_id: null, user_id: userId, channel_type: channelType, opted_in: false, opted_in_at: null, opted_out_at: null,
  consent_source: null, proactive_allowed: false, proactive_allowed_at: null, created_at: null, updated_at: null,
});

/** The consent of a user on a channel type; the defaults when none was recorded. Unknown user → NotFoundError. */
export async function getConsent(userId: string, channelType: Channel): Promise<Consent> {
  await assertUserExists(userId);
  const row = (await db()(TABLE).select(COLUMNS).where({ user_id: userId, channel_type: channelType }).first()) as ConsentRow | undefined;
  return toDomain(row ?? defaults(userId, channelType));
}

/** Every recorded consent of a user. */
export async function listConsents(userId: string): Promise<Consent[]> {
  await assertUserExists(userId);
  return ((await db()(TABLE).select(COLUMNS).where({ user_id: userId }).orderBy('channel_type')) as ConsentRow[]).map(toDomain);
}

export interface ConsentChange {
  opted_in?: boolean;
  proactive_allowed?: boolean;
  consent_source?: string | null;
}

/**
 * Records a consent change (upsert on user + channel type). Timestamps follow the flags: opted_in_at
 * when opting in, opted_out_at when opting out, proactive_allowed_at when proactive messages are allowed.
 * Opting out also withdraws proactive permission; allowing proactive messages requires an opt-in.
 */
export async function setConsent(userId: string, channelType: Channel, change: ConsentChange): Promise<Consent> {
  await assertUserExists(userId);
  return db().transaction(async (trx) => {
    const current =
      ((await trx(TABLE).select(COLUMNS).where({ user_id: userId, channel_type: channelType }).forUpdate().first()) as ConsentRow | undefined) ??
      defaults(userId, channelType);
    const optedIn = change.opted_in ?? current.opted_in;
    let proactive = change.proactive_allowed ?? current.proactive_allowed;
    if (!optedIn) {
      if (change.proactive_allowed === true) {
        throw new ValidationError('Proactive messages need an opt-in on the channel.', [
          { path: 'body.proactive_allowed', message: 'can only be true when the user is opted in' },
        ]);
      }
      proactive = false;
    }
    const now = new Date();
    const next = {
      user_id: userId,
      channel_type: channelType,
      opted_in: optedIn,
      opted_in_at: optedIn && !current.opted_in ? now : current.opted_in_at,
      opted_out_at: !optedIn && current.opted_in ? now : current.opted_out_at,
      consent_source: change.consent_source !== undefined ? change.consent_source : current.consent_source,
      proactive_allowed: proactive,
      proactive_allowed_at: proactive && !current.proactive_allowed ? now : proactive ? current.proactive_allowed_at : null,
    };
    const [row] = await trx(TABLE)
      .insert(next)
      .onConflict(['user_id', 'channel_type'])
      .merge()
      .returning(COLUMNS);
    return toDomain(row as ConsentRow);
  });
}

/** A user's part of an erasure: their consents. */
export async function eraseUserConsents(trx: Knex, user: { user_id: string }): Promise<Record<string, number>> {
  return { channel_consents: await trx(TABLE).where({ user_id: user.user_id }).delete() };
}
