/**
 * The agent's turn, one for every channel (the text channels and the messaging app through
 * pipeline.ts, web chat, voice and delegation): the session system's flag is checked, the channel's
 * interaction on the user's session is opened or reused, and `runTurn` answers one message with the
 * agent (journaled, streamed where the channel streams, an apology once every retry is spent) and
 * publishes the reply when the channel does not record it first. Where to change how a message is
 * answered: here.
 */
import { config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';
import { logger } from '../logger.js';
import { runAgent, type AgentEvents, type AgentTurn, type ToolCallRecord } from '../agent/agent.js';
import { turnJournal } from '../agent/turn-steps.store.js';
import { AGENT_FAILED_REPLY, agentTurnRefusal, historyBefore, sessionEvents } from '../agent/session-turn.js';
import type { HistoryEntry } from '../agent/history.js';
import type { Authority } from '../auth/scopes.js';
import type { ToolCaller } from '../tools.js';
import { answerOf, askFirstIn, questionFor, settleConfirmation, waitingOf, type WaitingQuestion } from '../agent/consent.js';
import { userHasPendingConfirmation } from '../agent/confirmations.store.js';
import { getContext } from '../sessions/context.js';
import { startInteraction } from '../sessions/interactions.js';
import { listInteractions } from '../sessions/sessions.store.js';
import type { Channel } from '../sessions/sessions.schemas.js';
import { acceptMessage } from '../stream/index.js';
import { resolveSession } from '../sessions/resolve.js';
import type { MessageBook, RecordedMessage, TurnAdapter, TurnLink } from './contract.js';

/**
 * SERVICE_SESSION_SYSTEM=false: no channel opens a session or publishes (503). Every way into a turn
 * checks it before anything is recorded (the webhooks' routers, the email listener, agent_delegate).
 */
export function assertSessionSystemOn(): void {
  if (!config().sessions.enabled) throw new ServiceUnavailableError('The session system is switched off (SERVICE_SESSION_SYSTEM=false).');
}

/**
 * The session's active interaction of `channel`, or a new one (which publishes CHANNEL_JOINED). With
 * a `channelRef` only an interaction with that ref is reused: a channel's conversation (an SMS number,
 * a Slack channel, an email thread, a call) thereby maps to one interaction while it lasts.
 */
export async function openInteraction(sessionId: string, channel: string, channelRef?: string, metadata?: Record<string, unknown>): Promise<string> {
  const open = (await listInteractions(sessionId)).filter((i) => i.channel === channel && i.status === 'active' && (channelRef === undefined || i.channel_ref === channelRef)).at(-1);
  if (open) return open.interaction_id;
  return (await startInteraction(sessionId, { channel: channel as Channel, ...(channelRef !== undefined ? { channel_ref: channelRef } : {}), ...(metadata ? { metadata } : {}) })).interaction_id;
}

export interface Turn {
  channel: string;
  session_id: string;
  interaction_id: string;
  user_id: string;
  /** The message the agent answers. */
  message: string;
  /**
   * The model's context before the message: given (a live call keeps its own), else the session's
   * history, without the message itself when it was published before the turn (`published`).
   */
  history?: HistoryEntry[];
  published?: boolean;
  /** The turn's journal key: a retried turn replays the model answers and tool results it recorded (no tool runs twice). Absent: not journaled. */
  journalKey?: string;
  /** False: a failure is thrown for the queue's retry; true: it is answered with AGENT_FAILED_REPLY. */
  finalAttempt: boolean;
  /**
   * Whether the message is the person's own, from an authenticated channel: only then may it answer
   * the session's pending confirmation (a delegated task's text is not the person's yes).
   */
  fromPerson: boolean;
  /** The confirmation the message answers by name (a Slack button under its question): that one only, never the model. */
  answers?: string;
  /** Whose rights the tools run with, when not the session user's own (a delegation: whoever asked). */
  authority?: Authority;
  /** The person's LIMIT_AGENT_TURNS_PER_MINUTE was taken at the door already (web chat answers 429 there). */
  turnCounted?: boolean;
  /** The most of the user's roles the tools may use (a caller known only by caller ID: the portal's set). */
  rolesAtMost?: ToolCaller['rolesAtMost'];
  excludeExecutors?: string[];
  /** Streaming channels: each piece of the reply as the model writes it, and the caller's interruption. */
  onToken?: (token: string) => void;
  signal?: AbortSignal;
  /** Kept beside the journal (a delegation's run row): tool results to replay, and each new one. */
  recorded?: AgentTurn['recorded'];
  onToolResult?: AgentTurn['onToolResult'];
  /** Publishes the reply as the session's assistant MESSAGE, once under this key; absent: the caller records and publishes it. */
  publish?: { idempotencyKey: string; metadata: (result: { tool_calls: ToolCallRecord[] }) => Record<string, unknown> };
}

export interface TurnResult {
  reply: string;
  tool_calls: ToolCallRecord[];
  /** The agent's failure when the reply is the apology (final attempt), or the abort of an interrupted turn. */
  error?: unknown;
  /** The question the reply ends with (a channel with buttons shows them under it). */
  question?: WaitingQuestion;
}

/**
 * Answers one message with the agent in the session, its TOOL_CALL / TOOL_RESULT / TYPING events on
 * the channel (`emit`, by default into the session's stream).
 */
export async function runTurn(turn: Turn, emit: AgentEvents = sessionEvents(turn.session_id, turn.channel, turn.interaction_id)): Promise<TurnResult> {
  let history = turn.history;
  if (!history) {
    const { conversation_history } = await getContext(turn.session_id);
    history = turn.published ? historyBefore(conversation_history, turn.message) : conversation_history;
  }
  const journal = turn.journalKey ? await turnJournal(turn.journalKey, turn.session_id) : undefined;
  const caller: ToolCaller = { kind: 'agent', id: turn.session_id, user_id: turn.user_id, ...(turn.authority ? { authority: turn.authority } : {}), ...(turn.rolesAtMost ? { rolesAtMost: turn.rolesAtMost } : {}) };
  let result: TurnResult;
  try {
    // The person's answer to a change the assistant asked about is settled here, for every channel.
    const settled = turn.fromPerson ? await settleConfirmation(turn.session_id, turn.interaction_id, turn.message, turn.journalKey ?? null, caller, emit, turn.answers) : undefined;
    if (settled) turn.onToken?.(settled.reply);
    // Over LIMIT_AGENT_TURNS_PER_MINUTE, channels that cannot answer 429 (text channels, calls, delegation) answer with a notice instead of the model.
    const busy = settled || turn.turnCounted ? undefined : await agentTurnRefusal(turn.user_id);
    if (busy) turn.onToken?.(busy);
    const answer = settled ?? (busy ? { reply: busy, tool_calls: [] } : await runAgent(
      {
        channel: turn.channel,
        history,
        message: turn.message,
        caller,
        askFirst: askFirstIn(turn.session_id, turn.interaction_id, turn.journalKey ?? null),
        ...(turn.excludeExecutors ? { excludeExecutors: turn.excludeExecutors } : {}),
        ...(turn.onToken ? { onToken: turn.onToken } : {}),
        ...(turn.signal ? { signal: turn.signal } : {}),
        ...journal,
        ...(turn.recorded ? { recorded: { ...journal?.recorded, ...turn.recorded } } : {}),
        ...(turn.onToolResult
          ? {
              onToolResult: async (key: string, record: ToolCallRecord) => {
                await journal?.onToolResult(key, record);
                await turn.onToolResult!(key, record);
              },
            }
          : {}),
      },
      emit,
    ));
    const waiting = settled ? undefined : waitingOf(answer.tool_calls);
    const question = waiting && questionFor(waiting.summary);
    if (question) turn.onToken?.(`\n\n${question}`);
    result = { reply: question ? `${answer.reply}\n\n${question}` : answer.reply, tool_calls: answer.tool_calls, ...(waiting ? { question: waiting } : {}) };
  } catch (err) {
    if (turn.signal?.aborted) return { reply: '', tool_calls: [], error: err };
    if (!turn.finalAttempt) throw err;
    logger(`channels.${turn.channel}`).error({ err, session_id: turn.session_id, turn: turn.journalKey }, 'agent failed for good; answering with an apology');
    result = { reply: AGENT_FAILED_REPLY, tool_calls: [], error: err };
  }
  if (turn.publish) {
    await acceptMessage(
      turn.session_id,
      { channel: turn.channel, role: 'assistant', content: result.reply, interaction_id: turn.interaction_id, metadata: turn.publish.metadata(result) },
      { idempotencyKey: turn.publish.idempotencyKey },
    );
  }
  return result;
}

export type InboundOutcome = { outcome: string; reply?: string | null };

/**
 * The turn of a recorded inbound message, for every channel that records its messages (the ones
 * above and the messaging app): the user, the window, what the channel answers itself, the session
 * and interaction, the agent (runTurn), the reply recorded once and queued, both messages published.
 * Each step is safe to repeat when the job is retried.
 */
export async function runInboundTurn<M extends RecordedMessage>(adapter: TurnAdapter<M>, book: MessageBook<M>, messageId: string, finalAttempt: boolean): Promise<InboundOutcome> {
  const message = await book.get(messageId);
  if (!message || message.direction !== 'inbound' || message.status !== 'received') return { outcome: 'skipped' };
  const log = logger(`channels.${adapter.channel}`);
  const replyWith = async (body: string, link: TurnLink & { suppressed?: boolean; question?: WaitingQuestion }) => {
    const recorded = await book.recordReply(message, body.slice(0, adapter.maxReplyChars), link);
    if (recorded.status === 'queued' || recorded.status === 'sending') await book.queueSend(recorded);
    return recorded;
  };

  // 1. The user; an unknown sender is told so (if the channel says anything), and the record says so.
  const user = await adapter.findUser(message);
  if (!user) {
    const notice = adapter.unknownSenderReplyFor ? await adapter.unknownSenderReplyFor(message) : adapter.unknownSenderReply;
    if (notice) await replyWith(notice, { user_id: null, session_id: null, interaction_id: null });
    await book.markProcessed(messageId, { user_id: null, session_id: null, interaction_id: null });
    log.info({ message_id: messageId }, 'inbound message from an unknown sender');
    return { outcome: 'unknown_sender', reply: notice };
  }
  // 2. The provider's window for free text opens with the person's message; what the channel
  //    handles itself (carrier keywords) is answered as the channel says, no agent.
  await adapter.window?.open(message, user);
  const intercepted = await adapter.intercept?.(message, user);
  // The carriers' opt-in keyword YES (consent recorded as usual) is also the person's answer when the
  // assistant's question is pending; nothing else a channel keeps from the agent (robots' mail) answers it.
  const answersQuestion = intercepted?.outcome === 'opted_in' && answerOf(message.body ?? '') === 'yes' && (await userHasPendingConfirmation(user.user_id));
  if (intercepted && !answersQuestion) {
    if (intercepted.reply) await replyWith(intercepted.reply, { user_id: user.user_id, session_id: null, interaction_id: null });
    await book.markProcessed(messageId, { user_id: user.user_id, session_id: null, interaction_id: null, metadata: { outcome: intercepted.outcome } });
    return intercepted;
  }
  // 3. The session and the channel's interaction on it.
  const { session } = await resolveSession(user.user_id);
  const interactionId = await openInteraction(session.session_id, adapter.channel, adapter.interactionRef(message), adapter.publishMetadata(message));
  // 4. The agent, with the session's history as context. Its reply is recorded before anything is
  //    published, so a retried job publishes and sends that reply instead of asking the model again.
  let recorded = await book.replyTo(messageId);
  if (!recorded) {
    const named = adapter.namedAnswer?.(message);
    const { reply: answer, question } = await runTurn({
      channel: adapter.channel,
      session_id: session.session_id,
      interaction_id: interactionId,
      user_id: user.user_id,
      message: message.body ?? '',
      journalKey: `${adapter.channel}:${messageId}`,
      finalAttempt,
      fromPerson: true,
      ...(named ? { answers: named } : {}),
    });
    const suppressed = adapter.mayReply ? !(await adapter.mayReply(user)) : false;
    recorded = await replyWith(answer, { user_id: user.user_id, session_id: session.session_id, interaction_id: interactionId, suppressed, ...(question ? { question } : {}) });
  } else if (recorded.status === 'queued' || recorded.status === 'sending') {
    await book.queueSend(recorded);
  }
  // 5. Publish the user's message and the reply (idempotency keys: a retry publishes nothing twice).
  const metadata = adapter.publishMetadata(message);
  const key = `${adapter.channel}:${message.provider_message_id ?? messageId}`;
  await acceptMessage(session.session_id, { channel: adapter.channel, role: 'user', content: message.body || '[empty message]', interaction_id: interactionId, metadata }, { idempotencyKey: `${key}:user` });
  await acceptMessage(session.session_id, { channel: adapter.channel, role: 'assistant', content: recorded.body!, interaction_id: interactionId, metadata }, { idempotencyKey: `${key}:assistant` });
  await book.markProcessed(messageId, { user_id: user.user_id, session_id: session.session_id, interaction_id: interactionId });
  return { outcome: recorded.status === 'suppressed' ? 'reply_suppressed' : 'processed', reply: recorded.body };
}
