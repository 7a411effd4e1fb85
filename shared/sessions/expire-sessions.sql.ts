/** Operation across sessions, their interactions and their audit log: closing the sessions past their resume window. */
import { db } from '../db/index.js';
import { fallbackSummary, type EndedInteraction } from './sessions.store.js';

/**
 * Closes every live session whose last activity is at or before now minus its resume window, ends
 * their active interactions, and writes an audit row of `auditType` for each session and of
 * `endedType` for each interaction, in one statement. Returns the sessions closed and the
 * interactions ended (whose CHANNEL_LEFT the caller publishes).
 */
export async function closeExpiredSessions(auditType: string, endedType: string): Promise<{ sessionIds: string[]; ended: EndedInteraction[] }> {
  const { rows } = await db().raw(
    `with expired as (
       update sessions s set status = 'closed', closed_at = now(), summary = ${fallbackSummary('s')}
        where status in ('active', 'idle', 'resumable') and last_activity <= now() - resume_window
       returning session_id, resume_window
     ), ended as (
       update session_interactions set status = 'closed', ended_at = now()
        where status = 'active' and session_id in (select session_id from expired)
       returning session_id, interaction_id, channel
     ), audit as (
       insert into session_events (session_id, interaction_id, event_type, payload)
       select session_id, null::uuid, ?, jsonb_build_object('reason', 'expired', 'resume_window', resume_window::text) from expired
       union all
       select session_id, interaction_id, ?, jsonb_build_object('channel', channel, 'reason', 'session_expired') from ended
     )
     select session_id, null::uuid as interaction_id, null::text as channel from expired
     union all
     select session_id, interaction_id, channel from ended`,
    [auditType, endedType],
  );
  const all = rows as Array<{ session_id: string; interaction_id: string | null; channel: string | null }>;
  return {
    sessionIds: all.filter((r) => !r.interaction_id).map((r) => r.session_id),
    ended: all.filter((r) => r.interaction_id).map((r) => ({ session_id: r.session_id, interaction_id: r.interaction_id!, channel: r.channel! })),
  };
}
