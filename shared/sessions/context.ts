/** The conversation context of a session (GET /api/sessions/{id}/context, and the agent's history). */
import { config } from '../config.js';
import { getSession } from './sessions.store.js';
import { lastMessages, toHistory } from './messages.store.js';
import type { SessionContext } from './sessions.schemas.js';

/** The context of a session: the last SERVICE_SESSION_MAX_HISTORY messages in order, last channel, preferences, custom data. */
export async function getContext(sessionId: string): Promise<SessionContext> {
  const [session, messages] = await Promise.all([getSession(sessionId), lastMessages(sessionId, config().sessions.maxHistory)]);
  const context = session.context as Partial<SessionContext>;
  return {
    conversation_history: messages.map(toHistory),
    last_channel: context.last_channel ?? null,
    preferences: context.preferences ?? {},
    custom_data: context.custom_data ?? {},
  };
}
