/** Query module of chatapp_messages: every messaging-app message in and out, with its delivery state. */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';
import type { ChatappMessage } from './chatapp.schemas.js';

export const TABLE = 'chatapp_messages';

/** A row: the ChatappMessage fields with database timestamps, the provider's inbound parameters and updated_at. */
interface Row extends Omit<ChatappMessage, 'created_at' | 'sent_at'> {
  payload: Record<string, string> | null;
  send_started_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A stored message; `payload` holds the provider's inbound parameters, `send_started_at` when the
 * first send to the provider began (status sending: its outcome may be unknown).
 */
export type StoredMessage = ChatappMessage & { payload: Record<string, string> | null; send_started_at: Date | null };

function toDomain(row: Row): StoredMessage {
  return {
    message_id: row.message_id,
    direction: row.direction,
    user_id: row.user_id,
    session_id: row.session_id,
    phone_number: row.phone_number,
    kind: row.kind,
    body: row.body,
    template_name: row.template_name,
    variables: row.variables,
    content: row.content,
    status: row.status,
    provider_message_id: row.provider_message_id,
    provider_status: row.provider_status,
    error: row.error,
    attempts: row.attempts,
    reply_to: row.reply_to,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at?.toISOString() ?? null,
    payload: row.payload,
    send_started_at: row.send_started_at,
  };
}

export type NewOutbound = Pick<Row, 'phone_number' | 'kind'> &
  Partial<Pick<Row, 'user_id' | 'session_id' | 'body' | 'template_name' | 'variables' | 'content' | 'reply_to'>>;

/** Records an outbound message as queued. */
export async function insertOutbound(message: NewOutbound, k: Knex = db()): Promise<StoredMessage> {
  const [row] = await k<Row>(TABLE)
    .insert({ ...message, direction: 'outbound', status: 'queued' } as Partial<Row>)
    .returning('*');
  return toDomain(row as Row);
}

/**
 * Records the reply to an inbound message once: a retried processing step gets the reply recorded
 * the first time instead of a second one.
 */
export async function insertReplyOnce(message: NewOutbound & { reply_to: string }, k: Knex = db()): Promise<StoredMessage> {
  const inserted = await k<Row>(TABLE)
    .insert({ ...message, direction: 'outbound', status: 'queued' } as Partial<Row>)
    .onConflict(k.raw('(reply_to) where reply_to is not null'))
    .ignore()
    .returning('*');
  return inserted[0] ? toDomain(inserted[0] as Row) : (await getReplyTo(message.reply_to, k))!;
}

/**
 * Records an inbound provider message unless its MessageSid is already recorded. Returns the record
 * and whether this call created it.
 */
export async function insertInboundOnce(
  message: { provider_message_id: string; phone_number: string; body: string; payload: Record<string, string> },
  k: Knex = db(),
): Promise<{ message: StoredMessage; created: boolean }> {
  const inserted = await k<Row>(TABLE)
    .insert({ ...message, direction: 'inbound', kind: 'text', status: 'received' } as Partial<Row>)
    .onConflict(k.raw('(direction, provider_message_id) where provider_message_id is not null'))
    .ignore()
    .returning('*');
  if (inserted[0]) return { message: toDomain(inserted[0] as Row), created: true };
  const existing = await k<Row>(TABLE).where({ direction: 'inbound', provider_message_id: message.provider_message_id }).first();
  return { message: toDomain(existing as Row), created: false };
}

/** The recorded reply to an inbound message, if any. */
export async function getReplyTo(inboundId: string, k: Knex = db()): Promise<StoredMessage | undefined> {
  const row = await k<Row>(TABLE).where({ reply_to: inboundId }).first();
  return row ? toDomain(row) : undefined;
}

export async function getMessage(messageId: string, k: Knex = db()): Promise<StoredMessage | undefined> {
  const row = await k<Row>(TABLE).where({ message_id: messageId }).first();
  return row ? toDomain(row) : undefined;
}

/** Messages of a user or phone number, newest first. */
export async function listMessages(
  filter: { user_id?: string; phone_number?: string; direction?: 'inbound' | 'outbound'; limit: number },
  k: Knex = db(),
): Promise<StoredMessage[]> {
  const q = k<Row>(TABLE).orderBy('created_at', 'desc').orderBy('message_id').limit(filter.limit);
  if (filter.user_id) q.where({ user_id: filter.user_id });
  if (filter.phone_number) q.where({ phone_number: filter.phone_number });
  if (filter.direction) q.where({ direction: filter.direction });
  return (await q).map(toDomain);
}

/** Marks an inbound message processed and links it to its user and session. */
export async function markProcessed(messageId: string, link: { user_id: string | null; session_id: string | null }, k: Knex = db()): Promise<void> {
  await k<Row>(TABLE).where({ message_id: messageId }).update({ status: 'processed', ...link });
}

/**
 * Records the intent to send before the provider is called (queued → sending; the first attempt's
 * moment is kept): a retry that finds the message sending looks it up at the provider first.
 */
export async function markSending(messageId: string, k: Knex = db()): Promise<void> {
  await k<Row>(TABLE)
    .where({ message_id: messageId })
    .whereIn('status', ['queued', 'sending'])
    .update({ status: 'sending', send_started_at: k.raw('coalesce(send_started_at, now())') } as never);
}

/** Which of these provider message ids are already recorded on an outbound message. */
export async function recordedProviderIds(sids: string[], k: Knex = db()): Promise<Set<string>> {
  if (!sids.length) return new Set();
  const rows = (await k<Row>(TABLE).where({ direction: 'outbound' }).whereIn('provider_message_id', sids).select('provider_message_id')) as Array<{ provider_message_id: string }>;
  return new Set(rows.map((r) => r.provider_message_id));
}

/** Records a successful send. */
export async function markSent(messageId: string, receipt: { sid: string; status: string }, k: Knex = db()): Promise<void> {
  await k<Row>(TABLE)
    .where({ message_id: messageId })
    .update({ status: 'sent', provider_message_id: receipt.sid, provider_status: receipt.status, error: null, attempts: k.raw('attempts + 1'), sent_at: k.fn.now() } as never);
}

/** Records a failed attempt; `final` marks the message failed for good. */
export async function markAttemptFailed(messageId: string, error: string, final: boolean, k: Knex = db()): Promise<void> {
  await k<Row>(TABLE)
    .where({ message_id: messageId })
    .whereNot({ status: 'sent' })
    .update({ error, attempts: k.raw('attempts + 1'), ...(final ? { status: 'failed' } : {}) } as never);
}

/** Provider statuses in delivery order; failed and undelivered end a message's course. */
export const providerStatusOrder = ['accepted', 'queued', 'sending', 'sent', 'delivered', 'read', 'failed', 'undelivered'] as const;

/**
 * Records a provider status callback on the outbound message with that MessageSid, unless the
 * message already reached a later status (callbacks can arrive out of order). Returns whether a
 * message was updated.
 */
export async function recordProviderStatus(sid: string, status: string, error: string | null, k: Knex = db()): Promise<boolean> {
  const order = [...providerStatusOrder];
  const updated = await k<Row>(TABLE)
    .where({ direction: 'outbound', provider_message_id: sid })
    .andWhere((q) =>
      q.whereNull('provider_status').orWhereRaw('coalesce(array_position(?::text[], provider_status), 0) < coalesce(array_position(?::text[], ?), 0)', [order, order, status]),
    )
    .update({ provider_status: status, ...(error ? { error } : {}) } as never);
  return updated > 0;
}

/** A user's part of an erasure: their messaging-app messages, by user and by phone number. */
export async function eraseUserChatappMessages(trx: Knex, user: { user_id: string; phone_number: string | null }): Promise<Record<string, number>> {
  return { chatapp_messages: await trx(TABLE).where({ user_id: user.user_id }).orWhere({ phone_number: user.phone_number }).delete() };
}
