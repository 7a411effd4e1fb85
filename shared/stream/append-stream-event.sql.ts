/**
 * Operation across a session (sessions.last_seq, and the context for a CONTEXT_UPDATE) and its audit
 * log (session_events): a stream event takes the session's next sequence in the statement that
 * writes it. Run by appendStreamEvent (stream.store.ts).
 */
import { preparedStatement } from '../db/index.js';

/** Appends a non-message event at its session's next sequence, once; CONTEXT_UPDATE also merges into the context. */
const appendEventSql = (contextChange: string) => `with s as (
     update sessions set last_seq = last_seq + 1 ${contextChange}
      where session_id = $1 and not exists (select 1 from session_events where event_id = $2)
     returning last_seq
   )
   insert into session_events (event_id, session_id, interaction_id, event_type, payload, sequence)
   select $2, $1, $3, $4, $5::jsonb, s.last_seq from s
   returning sequence`;
export const appendEvent = preparedStatement<{ sequence: number }>('stream.append-event', appendEventSql(''));
export const appendContextUpdate = preparedStatement<{ sequence: number }>(
  'stream.append-context-update',
  appendEventSql(`, context = jsonb_set(jsonb_set(context,
       '{preferences}', coalesce(context->'preferences', '{}'::jsonb) || coalesce($5::jsonb->'data'->'preferences', '{}'::jsonb)),
       '{custom_data}', coalesce(context->'custom_data', '{}'::jsonb) || coalesce($5::jsonb->'data'->'custom_data', '{}'::jsonb))`),
);
