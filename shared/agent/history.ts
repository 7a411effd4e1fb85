/** The model's view of a session's conversation_history, seen from one channel. */
import type OpenAI from 'openai';
import type { HistoryMessage } from '../sessions/sessions.schemas.js';

/** An entry of conversation_history (the session memory's HistoryMessage). */
export type HistoryEntry = HistoryMessage;

/** How a message from another channel enters the model context (as the spec's voice consumer does). */
export const realtimeUpdate = (entry: HistoryEntry) => `[Real-time update from ${entry.channel}] ${entry.role}: ${entry.content}`;

/**
 * Turns conversation_history into model messages for an agent answering on `channel`: the
 * channel's own messages (and those without a channel) keep their role; messages from other
 * channels become user messages `[Real-time update from <channel>] <role>: <content>`.
 */
export function modelHistory(history: HistoryEntry[], channel: string): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  return history.map((entry) => {
    if (entry.channel && entry.channel !== channel) return { role: 'user', content: realtimeUpdate(entry) };
    return entry.role === 'assistant' ? { role: 'assistant', content: entry.content } : { role: 'user', content: entry.content };
  });
}
