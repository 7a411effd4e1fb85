/**
 * Nothing changes without the person's yes (issue 39 point 8). A tool that changes data
 * (`changesData` in the registry) is not run when the model asks for it: the request is recorded as
 * the session's pending confirmation and the person is asked, in plain words, in their channel. Only
 * the person's own next message in the session answers it (runTurn passes it here, never text the
 * assistant read: a tool result, a document or a lead's notes cannot say yes), within
 * CONFIRMATION_TTL_SECONDS; a later answer finds it expired and nothing runs. Question and answer are
 * audit rows of the session.
 */
import { config } from '../config.js';
import { db } from '../db/index.js';
import { recordAudit } from '../sessions/events.store.js';
import { callTool } from '../tool-gateway/gateway.js';
import { findTool, type ToolCaller, type ToolDefinition } from '../tools.js';
import type { AgentEvents, ToolCallRecord } from './agent.js';
import { answerConfirmation, getConfirmation, pendingConfirmation, requestConfirmation } from './confirmations.store.js';

/** The status a waiting call reports to the model (and by which the turn finds the question to ask). */
export const AWAITING_CONFIRMATION = 'awaiting_confirmation';

const yesWords = new Set(['yes', 'y', 'yes please', 'yes go ahead', 'go ahead', 'confirm', 'confirmed', 'ok', 'okay', 'do it', 'sure']);
// Not STOP or CANCEL: on SMS and the messaging app those are carrier opt-out keywords, and stay so.
const noWords = new Set(['no', 'n', 'no thanks', 'dont', 'do not', 'nope']);

/** The person's answer when the whole message is a yes or a no (a longer message is neither). */
export function answerOf(message: string): 'yes' | 'no' | undefined {
  const words = message.toLowerCase().replace(/[^a-z ]+/g, '').replace(/\s+/g, ' ').trim();
  return yesWords.has(words) ? 'yes' : noWords.has(words) ? 'no' : undefined;
}

/** What the call will do, in plain words: the tool, what it is for, and the values it is given. */
export function describeCall(tool: ToolDefinition, args: unknown): string {
  const purpose = tool.description.split(/(?<=\.)\s/)[0]!.replace(/\.$/, '');
  const values = args && typeof args === 'object' ? Object.entries(args as Record<string, unknown>).map(([k, v]) => `${k.replace(/_/g, ' ')} ${JSON.stringify(v)}`) : [];
  return `${tool.name} (${purpose})${values.length ? ` with ${values.join(', ').slice(0, 400)}` : ''}`;
}

/** The question the person is asked, in any channel (a yes or a no as the next message). */
export const questionFor = (summary: string) => `Before I do this, please confirm: ${summary}. Reply yes to go ahead, or no to cancel.`;

/** The askFirst hook of a turn in a session (`turnKey`: its journal key): records the pending confirmation and its audit row. */
export function askFirstIn(sessionId: string, interactionId: string | null, turnKey: string | null): (tool: ToolDefinition, args: unknown) => Promise<ToolCallRecord> {
  let asked = false;
  return async (tool, args) => {
    // One question at a time: the person answers one thing with one yes.
    if (asked) return { tool_name: tool.name, arguments: args, ok: false, result: { error: 'Only one change can wait for the person at a time; ask for this one after they answer.' } };
    asked = true;
    const summary = describeCall(tool, args);
    const confirmation = await requestConfirmation(sessionId, tool.name, args, summary, turnKey);
    await recordAudit(db(), { session_id: sessionId, interaction_id: interactionId, event_type: 'confirmation_requested', payload: { confirmation_id: confirmation.confirmation_id, tool_name: tool.name, summary } });
    return {
      tool_name: tool.name,
      arguments: args,
      ok: false,
      result: { status: AWAITING_CONFIRMATION, confirmation_id: confirmation.confirmation_id, summary, note: 'Not done: the person is asked to confirm it and it runs only on their yes. Do not claim it was done.' },
    };
  };
}

/** A question a turn's reply ends with: the confirmation it waits on, and what will happen in plain words. */
export interface WaitingQuestion {
  confirmation_id: string;
  summary: string;
}

/** The confirmation a turn's tool calls left waiting, if any (its question is added to the reply). */
export function waitingOf(calls: ToolCallRecord[]): WaitingQuestion | undefined {
  const waiting = calls.map((c) => c.result as { status?: string; confirmation_id?: string; summary?: string } | null).find((r) => r?.status === AWAITING_CONFIRMATION);
  return waiting?.summary && waiting.confirmation_id ? { confirmation_id: waiting.confirmation_id, summary: waiting.summary } : undefined;
}

const ttlText = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} seconds`);

/** What the person is told when they answer a question asked longer ago than CONFIRMATION_TTL_SECONDS. */
export const expiredReply = (summary: string) =>
  `That question has expired (a change waits ${ttlText(config().tools.confirmationTtlSeconds)} for your yes), so nothing was changed (${summary}). Ask me again if you still want it.`;

/** What a button answering a question that is no longer open (answered, replaced) is told. */
export const NOT_OPEN_REPLY = 'That question is no longer open (it was answered or replaced by a newer one): this answer changed nothing.';

/**
 * The person's message answers the session's pending confirmation: a yes runs the tool with the
 * caller's rights (checked again by the gateway) and answers its outcome; a no cancels it; any other
 * message drops it (undefined: the turn goes on as usual). A question asked more than
 * CONFIRMATION_TTL_SECONDS ago is answered as expired (a yes runs nothing). A retry of the turn that
 * asked (same `turnKey`) leaves its own question alone. `named`: the answer names its question (a
 * Slack button under it) and settles that one only; it always gets a reply, never the model.
 */
export async function settleConfirmation(
  sessionId: string,
  interactionId: string | null,
  message: string,
  turnKey: string | null,
  caller: ToolCaller,
  emit: AgentEvents,
  named?: string,
): Promise<{ reply: string; tool_calls: ToolCallRecord[] } | undefined> {
  const pending = await pendingConfirmation(sessionId);
  if (named !== undefined && pending?.confirmation_id !== named) return closedAnswer(named);
  if (!pending || (turnKey !== null && pending.turn_key === turnKey)) return undefined;
  const answer = answerOf(message);
  const taken = await answerConfirmation(pending.confirmation_id, answer === 'yes' ? 'confirmed' : answer === 'no' ? 'declined' : 'dropped', config().tools.confirmationTtlSeconds);
  if (!taken) return named !== undefined ? closedAnswer(named) : undefined;
  const audit = (payload: Record<string, unknown>) =>
    recordAudit(db(), { session_id: sessionId, interaction_id: interactionId, event_type: 'confirmation_answered', payload: { confirmation_id: pending.confirmation_id, tool_name: pending.tool_name, answer: answer ?? 'other', ...payload } });
  if (taken.status === 'expired') {
    await audit({ outcome: 'expired' });
    // Any other message is answered as usual; a yes or a no is told the question expired.
    return answer ? { reply: expiredReply(pending.summary), tool_calls: [] } : undefined;
  }
  if (answer !== 'yes') {
    await audit({ outcome: answer === 'no' ? 'cancelled' : 'dropped' });
    return answer === 'no' ? { reply: `Cancelled: nothing was changed (${pending.summary}).`, tool_calls: [] } : undefined;
  }
  const tool = await findTool(pending.tool_name);
  let record: ToolCallRecord;
  await emit('TOOL_CALL', { tool_name: pending.tool_name, arguments: pending.arguments });
  try {
    if (!tool) throw new Error(`the tool ${pending.tool_name} is no longer available`);
    record = { tool_name: pending.tool_name, arguments: pending.arguments, ok: true, result: (await callTool(tool, pending.arguments, caller)) ?? null };
  } catch (err) {
    record = { tool_name: pending.tool_name, arguments: pending.arguments, ok: false, result: { error: err instanceof Error ? err.message : String(err) } };
  }
  await emit('TOOL_RESULT', { tool_name: pending.tool_name, result: record.result });
  await audit({ outcome: record.ok ? 'done' : 'failed' });
  const outcome = JSON.stringify(record.result) ?? 'null';
  const reply = record.ok
    ? `Done: ${pending.summary}. Result: ${outcome.length > 500 ? `${outcome.slice(0, 500)}…` : outcome}`
    : `That did not work: ${(record.result as { error: string }).error}`;
  return { reply, tool_calls: [record] };
}

/** The reply to an answer naming a question that is not pending: expired, or no longer open. */
async function closedAnswer(confirmationId: string): Promise<{ reply: string; tool_calls: ToolCallRecord[] }> {
  const named = await getConfirmation(confirmationId);
  return { reply: named?.status === 'expired' ? expiredReply(named.summary) : NOT_OPEN_REPLY, tool_calls: [] };
}
