/** Query module of `channel_messages`: every message the contract's channels receive or send, with its state. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';

export const TABLE = 'channel_messages';

/** `refused`: an inbound message recorded with the reason (`error`) it was not accepted; it is never processed. */
export type MessageStatus = 'received' | 'processed' | 'refused' | 'queued' | 'sending' | 'sent' | 'failed' | 'suppressed';

/** A stored channel message (timestamps as dates; the API lists them as ISO text). */
export interface ChannelMessage {
  message_id: string;
  channel: string;
  direction: 'inbound' | 'outbound';
  provider_message_id: string | null;
  /** Who wrote or is written to: E.164 number, Slack user id, email address. */
  remote_address: string;
  /** Our side: the number written to, the Slack channel, our mailbox. */
  local_address: string | null;
  /** The conversation thread: Slack thread_ts, the email thread's first Message-ID. */
  thread_ref: string | null;
  user_id: string | null;
  session_id: string | null;
  interaction_id: string | null;
  body: string | null;
  status: MessageStatus;
  reply_to: string | null;
  attempts: number;
  error: string | null;
  payload: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
  send_started_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
}

const COLUMNS = [
  'message_id', 'channel', 'direction', 'provider_message_id', 'remote_address', 'local_address', 'thread_ref', 'user_id', 'session_id', 'interaction_id',
  'body', 'status', 'reply_to', 'attempts', 'error', 'payload', 'metadata', 'send_started_at', 'sent_at', 'created_at',
];

export interface NewInbound {
  channel: string;
  provider_message_id: string;
  remote_address: string;
  local_address?: string | null;
  thread_ref?: string | null;
  body: string;
  payload: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** Refused: recorded with the reason, never queued for processing. */
  refused?: string;
}

export interface NewOutbound {
  channel: string;
  remote_address: string;
  local_address?: string | null;
  thread_ref?: string | null;
  body: string;
  user_id: string | null;
  session_id?: string | null;
  interaction_id?: string | null;
  reply_to?: string | null;
  metadata?: Record<string, unknown>;
  status?: 'queued' | 'suppressed';
}

const json = (v: unknown) => (v === undefined ? undefined : JSON.stringify(v));

/** Records an inbound provider message unless the channel already holds its provider id; returns it and whether this call created it. */
export async function insertInboundOnce(message: NewInbound, k: Knex = db()): Promise<{ message: ChannelMessage; created: boolean }> {
  const { refused, ...fields } = message;
  const inserted = await k(TABLE)
    .insert({ ...fields, direction: 'inbound', status: refused ? 'refused' : 'received', error: refused ?? null, payload: json(message.payload), metadata: json(message.metadata ?? {}) })
    .onConflict(k.raw(`(channel, provider_message_id) where direction = 'inbound' and provider_message_id is not null`))
    .ignore()
    .returning(COLUMNS);
  if (inserted[0]) return { message: inserted[0] as ChannelMessage, created: true };
  const existing = await k(TABLE).select(COLUMNS).where({ channel: message.channel, direction: 'inbound', provider_message_id: message.provider_message_id }).first();
  return { message: existing as ChannelMessage, created: false };
}

/** Records an outbound message (queued, or suppressed when it may not be sent). */
export async function insertOutbound(message: NewOutbound, k: Knex = db()): Promise<ChannelMessage> {
  const [row] = await k(TABLE)
    .insert({ ...message, direction: 'outbound', status: message.status ?? 'queued', metadata: json(message.metadata ?? {}) })
    .returning(COLUMNS);
  return row as ChannelMessage;
}

/** Records the reply to an inbound message once: a retried step gets the first record back, body included. */
export async function insertReplyOnce(message: NewOutbound & { reply_to: string }, k: Knex = db()): Promise<ChannelMessage> {
  const inserted = await k(TABLE)
    .insert({ ...message, direction: 'outbound', status: message.status ?? 'queued', metadata: json(message.metadata ?? {}) })
    .onConflict(k.raw('(reply_to) where reply_to is not null'))
    .ignore()
    .returning(COLUMNS);
  return (inserted[0] as ChannelMessage | undefined) ?? (await getReplyTo(message.reply_to, k))!;
}

export async function getMessage(messageId: string, k: Knex = db()): Promise<ChannelMessage | undefined> {
  return (await k(TABLE).select(COLUMNS).where({ message_id: messageId }).first()) as ChannelMessage | undefined;
}

/** The reply recorded for an inbound message, if any. */
export async function getReplyTo(messageId: string, k: Knex = db()): Promise<ChannelMessage | undefined> {
  return (await k(TABLE).select(COLUMNS).where({ reply_to: messageId }).first()) as ChannelMessage | undefined;
}

/** Marks an inbound message processed, with the user, session and interaction it went to. */
export async function markProcessed(messageId: string, to: { user_id: string | null; session_id: string | null; interaction_id: string | null; metadata?: Record<string, unknown> }): Promise<void> {
  const { metadata, ...ids } = to;
  await db()(TABLE)
    .where({ message_id: messageId })
    .update({ ...ids, status: 'processed', updated_at: db().fn.now(), ...(metadata ? { metadata: db().raw(`metadata || ?::jsonb`, [JSON.stringify(metadata)]) } : {}) });
}

/** Records that a send to the provider begins (its outcome may be unknown if the process dies). */
export async function markSending(messageId: string): Promise<void> {
  await db()(TABLE)
    .where({ message_id: messageId })
    .update({ status: 'sending', attempts: db().raw('attempts + 1'), send_started_at: db().raw('coalesce(send_started_at, now())'), updated_at: db().fn.now() });
}

export async function markSent(messageId: string, providerMessageId: string, metadata: Record<string, unknown> = {}): Promise<void> {
  await db()(TABLE)
    .where({ message_id: messageId })
    .update({ status: 'sent', provider_message_id: providerMessageId, sent_at: db().fn.now(), error: null, updated_at: db().fn.now(), metadata: db().raw(`metadata || ?::jsonb`, [JSON.stringify(metadata)]) });
}

/** Records a failed attempt; `final` marks the message failed for good, else it stays queued for the retry. */
export async function markAttemptFailed(messageId: string, error: string, final: boolean): Promise<void> {
  await db()(TABLE)
    .where({ message_id: messageId })
    .update({ status: final ? 'failed' : db().raw(`case when status = 'sending' then 'sending' else 'queued' end`), error, updated_at: db().fn.now() });
}

/** Provider ids already recorded on some outbound message of a channel (a lookup must not adopt another message's send). */
export async function recordedProviderIds(channel: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db()(TABLE).select('provider_message_id').where({ channel, direction: 'outbound' }).whereIn('provider_message_id', ids);
  return new Set(rows.map((r: { provider_message_id: string }) => r.provider_message_id));
}

/** Messages of a channel, newest first, optionally of one user or remote address. */
export async function listMessages(filter: { channel?: string; user_id?: string; remote_address?: string; limit?: number }): Promise<ChannelMessage[]> {
  const q = db()(TABLE).select(COLUMNS).orderBy('created_at', 'desc').limit(filter.limit ?? 50);
  if (filter.channel) q.where({ channel: filter.channel });
  if (filter.user_id) q.where({ user_id: filter.user_id });
  if (filter.remote_address) q.where({ remote_address: filter.remote_address });
  return (await q) as ChannelMessage[];
}

/** A user's part of an erasure: their channel messages, and those from their number or address before they were linked. */
export async function eraseUserChannelMessages(trx: Knex, user: { user_id: string; phone_number: string | null; email: string | null }): Promise<Record<string, number>> {
  const deleted = await trx(TABLE)
    .where({ user_id: user.user_id })
    .orWhere((q) => {
      q.whereIn('remote_address', [user.phone_number, ...(user.email ? [user.email.toLowerCase()] : [])].filter(Boolean));
    })
    .delete();
  return { channel_messages: deleted };
}
