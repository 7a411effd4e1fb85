/**
 * Operation across a session (sessions: sequence, message count, last activity, last channel), its
 * history (session_messages) and its audit log (session_events): appending messages is one
 * statement, so a message, its sequence and its audit row commit together, and rows beyond
 * SERVICE_SESSION_MAX_HISTORY are trimmed in it; messages of one session take its next sequences in
 * batch order. Run by appendMessages (stream.store.ts).
 */
import { preparedStatement } from '../db/index.js';

export const appendMessagesStatement = preparedStatement<{ message_id: string; sequence: number }>(
  'stream.append-messages',
  `with input as (
     select * from json_to_recordset($1::json)
       as t(idx int, message_id uuid, session_id uuid, interaction_id uuid, channel text, role text, content text, metadata jsonb, idempotency_key text, envelope jsonb)
      -- A correlated scalar subquery runs as an index probe per row; NOT EXISTS would be planned as
      -- an anti join over the whole table (the function's row estimate is a fixed 100).
      where (select true from session_messages m where m.message_id = t.message_id) is null
   ), runs as (
     select session_id, count(*)::int as n, (array_agg(channel order by idx desc))[1] as last_channel from input group by session_id
   ), s as (
     update sessions
        set last_seq = last_seq + runs.n, message_count = message_count + runs.n, last_activity = now(),
            context = jsonb_set(context, '{last_channel}', to_jsonb(runs.last_channel))
       from runs
      where sessions.session_id = runs.session_id and sessions.status <> 'closed'
     returning sessions.session_id, last_seq - runs.n as seq_before, message_count - runs.n as count_before, message_count
   ), numbered as (
     select i.*, s.seq_before + row_number() over w as sequence, s.count_before + row_number() over w as position
       from input i join s using (session_id)
     window w as (partition by i.session_id order by i.idx)
   ), m as (
     insert into session_messages (message_id, session_id, interaction_id, sequence, position, channel, role, content, metadata, idempotency_key)
     select message_id, session_id, interaction_id, sequence, position, channel, role, content, metadata, idempotency_key from numbered
   ), e as (
     insert into session_events (session_id, interaction_id, event_type, payload, sequence)
     select session_id, interaction_id, 'message_published', jsonb_set(envelope, '{data,sequence}', to_jsonb(sequence)), sequence from numbered
   ), trimmed as (
     delete from session_messages d using s where d.session_id = s.session_id and d.position <= s.message_count - $2
   )
   select message_id, sequence from numbered`,
);
