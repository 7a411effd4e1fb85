/**
 * What every channel running the agent in a session shares (web chat, messaging app, the text
 * channels, voice, delegation). It sits below the channels: they import it, it imports none of them.
 */
import { acceptEvent } from '../stream/index.js';
import { TooManyRequestsError } from '../errors.js';
import { takeLimit } from '../limits.js';
import type { AgentEvents } from './agent.js';
import type { HistoryEntry } from './history.js';

/** The web chat's channel; delegated runs speak on it too, so the person sees them in their chat. */
export const WEB_CHANNEL = 'chat';

/** Sent when the agent failed for good on a message (every retry spent). */
export const AGENT_FAILED_REPLY = "Sorry, I couldn't process your message just now. Please try again in a moment.";

/**
 * Takes one of the person's agent turns (LIMIT_AGENT_TURNS_PER_MINUTE, over every channel). Over the
 * limit, the notice a channel that cannot answer 429 (SMS, Slack, email, messaging app, voice) gives
 * instead of asking the model; undefined when the turn may run.
 */
export async function agentTurnRefusal(userId: string): Promise<string | undefined> {
  try {
    await takeLimit('agentTurns', userId);
    return undefined;
  } catch (err) {
    if (!(err instanceof TooManyRequestsError)) throw err;
    return `You are sending messages faster than I can answer; please try again in ${err.retryAfterSeconds} seconds.`;
  }
}

/** Emits the agent's events (TYPING, TOOL_CALL, TOOL_RESULT) into the session's stream on the given channel. */
export function sessionEvents(sessionId: string, channel: string, interactionId: string): AgentEvents {
  return (eventType, data) => acceptEvent(sessionId, { event_type: eventType, channel, data } as Parameters<typeof acceptEvent>[1], { interactionId });
}

/** The history before a web-chat turn: the context without the turn's own user message (already published). */
export function historyBefore(history: HistoryEntry[], message: string): HistoryEntry[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const h = history[i]!;
    if (h.role === 'user' && h.channel === WEB_CHANNEL && h.content === message) return [...history.slice(0, i), ...history.slice(i + 1)];
  }
  return history;
}
