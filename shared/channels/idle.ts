/**
 * Ends the interactions of the contract's text channels (sms, slack, email) that fell quiet: no
 * message for CHANNELS_IDLE_SECONDS. Each closes as an explicit close would (CHANNEL_LEFT with the
 * reason, the session idle when it was the last). Run by the session expiry tick.
 */
import { config } from '../config.js';
import { db } from '../db/index.js';
import { ConflictError } from '../errors.js';
import { closeInteraction } from '../sessions/interactions.js';
import { channelAdapters } from './adapters.js';

/** Active interactions of these channels whose latest message (or start) is older than `idleSeconds`: one statement over interactions and messages. */
async function quietInteractions(channels: string[], idleSeconds: number, limit = 500): Promise<string[]> {
  if (!channels.length) return [];
  const { rows } = await db().raw(
    `select i.interaction_id
       from session_interactions i
      where i.status = 'active' and i.channel = any(?)
        and greatest(i.started_at, (select max(m.created_at) from session_messages m where m.session_id = i.session_id and m.interaction_id = i.interaction_id))
            <= now() - make_interval(secs => ?)
      order by i.started_at
      limit ?`,
    [channels, idleSeconds, limit],
  );
  return rows.map((r: { interaction_id: string }) => r.interaction_id);
}

/** Closes the quiet interactions; returns how many. */
export async function endQuietChannelInteractions(): Promise<number> {
  let ended = 0;
  for (const id of await quietInteractions(Object.keys(channelAdapters), config().channels.idleSeconds)) {
    try {
      await closeInteraction(id, undefined, 'channel_idle');
      ended++;
    } catch (err) {
      // Closed meanwhile by another tick or with its session.
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  return ended;
}
