/** Query module of `channel_consents`: per user and channel type, opt-in and proactive-message permission. */
import { db } from '../db/index.js';
import { ValidationError } from '../errors.js';
import type { Channel } from './schemas.js';
import { assertUserExists } from './users.store.js';

const TABLE = 'channel_consents';
const COLUMNS: string[] = [
  'consent_id', 'user_id', 'channel_type', 'opted_in', 'opted_in_at', 'opted_out_at', 'consent_source',
  'proactive_allowed', 'proactive_allowed_at', 'created_at', 'updated_at',
];

export interface Consent {
  /** Null when nothing was ever recorded (the defaults: not opted in, no proactive messages). */
  consent_id: string | null;
  user_id: string;
  channel_type: Channel;
  opted_in: boolean;
  opted_in_at: Date | null;
  opted_out_at: Date | null;
  consent_source: string | null;
  proactive_allowed: boolean;
  proactive_allowed_at: Date | null;
  created_at: Date | null;
  updated_at: Date | null;
}

const defaults = (userId: string, channelType: Channel): Consent => ({
  consent_id: null, user_id: userId, channel_type: channelType, opted_in: false, opted_in_at: null, opted_out_at: null,
  consent_source: null, proactive_allowed: false, proactive_allowed_at: null, created_at: null, updated_at: null,
});

/** The consent of a user on a channel type; the defaults when none was recorded. Unknown user → NotFoundError. */
export async function getConsent(userId: string, channelType: Channel): Promise<Consent> {
  await assertUserExists(userId);
  const row = (await db()(TABLE).select(COLUMNS).where({ user_id: userId, channel_type: channelType }).first()) as Consent | undefined;
  return row ?? defaults(userId, channelType);
}

/** Every recorded consent of a user. */
export async function listConsents(userId: string): Promise<Consent[]> {
  await assertUserExists(userId);
  return (await db()(TABLE).select(COLUMNS).where({ user_id: userId }).orderBy('channel_type')) as Consent[];
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
      ((await trx(TABLE).select(COLUMNS).where({ user_id: userId, channel_type: channelType }).forUpdate().first()) as Consent | undefined) ??
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
    return row as Consent;
  });
}
