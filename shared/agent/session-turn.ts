/**
 * What every channel running the agent in a session shares (web chat, messaging app, the text
 * channels, voice, delegation). It sits below the channels: they import it, it imports none of them.
 */
import { acceptEvent } from '../stream/index.js';
import type { AgentEvents } from './agent.js';
import type { HistoryEntry } from './history.js';

/** The web chat's channel; delegated runs speak on it too, so the person sees them in their chat. */
export const WEB_CHANNEL = 'chat';

/** Sent when the agent failed for good on a message (every retry spent). */
export const AGENT_FAILED_REPLY = "Sorry, I couldn't process your message just now. Please try again in a moment.";

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
