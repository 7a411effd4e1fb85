/**
 * Session summaries for the portal's history. When a session goes idle or closes, the store writes
 * the first user message cut short (always available, no model needed); with a model configured,
 * the sessions.summarize job then replaces it with the model's one-line summary.
 */
import { llmClient, llmModel } from '../clients/llm.js';
import { config } from '../config.js';
import { enqueue } from '../queues.js';
import { lastMessages } from './messages.store.js';
import { setSessionSummary } from './sessions.store.js';

const maxSummaryChars = 200;

export const summaryPrompt =
  'Summarize this conversation between a user and an assistant in one short sentence (at most 140 characters), from the user\'s point of view, for a list of past conversations. Answer with the sentence only.';

/** Queues the model's summary of sessions that just went idle or closed (nothing without a model). */
export async function queueSummaries(sessionIds: string[]): Promise<void> {
  if (!llmClient()) return;
  for (const sessionId of sessionIds) await enqueue('sessions.summarize', { session_id: sessionId, requested_at: new Date().toISOString() });
}

/** The sessions.summarize job: asks the model and stores its sentence; a session without messages keeps none. */
export async function summarizeSession(sessionId: string): Promise<{ summary: string | null }> {
  const client = llmClient();
  if (!client) return { summary: null };
  const messages = await lastMessages(sessionId, config().sessions.maxHistory);
  if (!messages.length) return { summary: null };
  const transcript = messages.map((m) => `${m.role} (${m.channel}): ${m.content}`).join('\n');
  const completion = await client.chat.completions.create({
    model: llmModel(),
    messages: [
      { role: 'system', content: summaryPrompt },
      { role: 'user', content: transcript.slice(-12_000) },
    ],
  });
  const text = completion.choices[0]?.message?.content?.trim().replace(/\s+/g, ' ');
  if (!text) return { summary: null };
  const summary = text.length > maxSummaryChars ? `${text.slice(0, maxSummaryChars - 1)}…` : text;
  await setSessionSummary(sessionId, summary);
  return { summary };
}
