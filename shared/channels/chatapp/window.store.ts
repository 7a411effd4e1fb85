/**
 * Query module of chatapp_sessions: per phone number, the 24-hour customer window the provider
 * opens with each inbound message (free-form messages only inside it; templates any time).
 */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';

export const TABLE = 'chatapp_sessions';
/** Messaging-app customer window: 24 hours from the latest inbound message. */
export const CUSTOMER_WINDOW = '24 hours';

export interface CustomerWindow {
  user_id: string;
  phone_number: string;
  window_expires_at: Date;
  last_inbound_at: Date;
}

/** Records an inbound message of a user's phone: the window now ends 24 hours from now. */
export async function extendWindow(userId: string, phoneNumber: string, k: Knex = db()): Promise<CustomerWindow> {
  const { rows } = await k.raw<{ rows: CustomerWindow[] }>(
    `insert into ${TABLE} (user_id, phone_number, last_inbound_at, window_expires_at)
     values (?, ?, now(), now() + interval '${CUSTOMER_WINDOW}')
     on conflict (phone_number) do update
       set user_id = excluded.user_id, last_inbound_at = excluded.last_inbound_at, window_expires_at = excluded.window_expires_at
     returning user_id, phone_number, window_expires_at, last_inbound_at`,
    [userId, phoneNumber],
  );
  return rows[0]!;
}

/** The window of a phone number, if the number ever wrote to us. */
export async function getWindow(phoneNumber: string, k: Knex = db()): Promise<CustomerWindow | undefined> {
  return k<CustomerWindow>(TABLE).select('user_id', 'phone_number', 'window_expires_at', 'last_inbound_at').where({ phone_number: phoneNumber }).first();
}

/** Whether the customer window of a phone number is open now (judged by the database clock). */
export async function windowOpen(phoneNumber: string, k: Knex = db()): Promise<boolean> {
  const row = await k(TABLE).where({ phone_number: phoneNumber }).andWhere('window_expires_at', '>', k.fn.now()).first('phone_number');
  return Boolean(row);
}

/**
 * After a user's phone number changed: the window is the provider's, per number, so the old number's
 * no longer applies to the user and the new number's opens only with its own next inbound message.
 */
export async function forgetWindowsOnPhoneChange(k: Knex, userId: string, newPhone: string | null): Promise<void> {
  await k(TABLE)
    .where({ user_id: userId })
    .modify((q) => {
      if (newPhone) q.orWhere({ phone_number: newPhone });
    })
    .delete();
}

/** A user's part of an erasure: their window records. */
export async function eraseUserWindows(trx: Knex, user: { user_id: string }): Promise<Record<string, number>> {
  return { chatapp_sessions: await trx(TABLE).where({ user_id: user.user_id }).delete() };
}
