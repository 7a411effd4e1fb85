/**
 * The agent: one interface over a language model with the platform's tools. With LLM_PROVIDER=openai
 * it runs a tool loop on the configured OpenAI-compatible endpoint; with none it answers a fixed text
 * saying no model is configured. Either way it emits TYPING, and TOOL_CALL / TOOL_RESULT per tool call.
 * Tool calls go through the tool gateway (time and size limits, audit), as calls of assistants do.
 */
import type OpenAI from 'openai';
import { llmClient, llmModel } from '../clients/llm.js';
import { findTool, inputDigest, toolJsonSchema, type ToolCaller, type ToolDefinition } from '../tools.js';
import { AppError } from '../errors.js';
import { callTool, toolsFor } from '../tool-gateway/gateway.js';
import { modelHistory, type HistoryEntry } from './history.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Session events the agent emits while it works (TYPING, TOOL_CALL, TOOL_RESULT). */
export type AgentEventType = 'TYPING' | 'TOOL_CALL' | 'TOOL_RESULT';
export type AgentEvents = (eventType: AgentEventType, data: Record<string, unknown>) => Promise<unknown>;

export interface AgentTurn {
  /** Channel the agent answers on (chat, chatapp…): other channels' history entries become real-time updates. */
  channel: string;
  /** The session's conversation_history before this turn. */
  history: HistoryEntry[];
  /** The user's new message. */
  message: string;
  /** Who the tool gateway audits the agent's calls as, and whose rights they have: the agent in its session, serving its user (user_id). */
  caller?: ToolCaller;
  /** Executor types whose tools this turn is not offered (a delegated run cannot delegate again). */
  excludeExecutors?: string[];
  /**
   * Tool results already obtained by an earlier attempt of the same run, by call key: such a call is
   * answered from here instead of running the tool again (retried jobs do not repeat side effects).
   */
  recorded?: Record<string, ToolCallRecord>;
  /** Called after each tool call that ran, so the caller can record it under its key. */
  onToolResult?: (key: string, record: ToolCallRecord) => Promise<void>;
  /**
   * Called before a tool call runs, so the caller can record the intent: a retry that finds an intent
   * without a result does not run the call again (its outcome is unknown; see TurnJournal).
   */
  onToolStart?: (key: string, intent: Pick<ToolCallRecord, 'tool_name' | 'arguments'>) => Promise<void>;
  /**
   * The model's tool-calling answers of an earlier attempt, by round: replayed instead of asking the
   * model again, so a retry makes the same tool calls (same keys) rather than new ones.
   */
  recordedRounds?: Record<number, ModelRound>;
  /** Called after each model answer that asks for tools, so the caller can record it by round. */
  onModelRound?: (round: number, answer: ModelRound) => Promise<void>;
  /** Streams the reply: the model is asked with `stream: true` and each piece of text is handed here as it comes (a live call speaks it). */
  onToken?: (token: string) => void;
  /** Cancels the turn (a caller who interrupts): the model request is aborted. */
  signal?: AbortSignal;
  /**
   * Asked instead of running a tool that changes data: records that the person is to confirm it and
   * answers what the model is told. Absent: such a tool is refused (nobody could say yes).
   */
  askFirst?: (tool: ToolDefinition, args: unknown) => Promise<ToolCallRecord>;
}

/** A model answer that asked for tools, as the next request repeats it. */
export interface ModelRound {
  content: string | null;
  tool_calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

export interface ToolCallRecord {
  tool_name: string;
  arguments: unknown;
  result: unknown;
  ok: boolean;
}

export interface AgentReply {
  reply: string;
  tool_calls: ToolCallRecord[];
  /** Model that answered; null when none is configured. */
  model: string | null;
}

export const NO_MODEL_REPLY =
  'No language model is configured for this assistant (LLM_PROVIDER is none), so I cannot answer yet. Your message was received and recorded.';

const systemPrompt = [
  'You are the assistant of switchboard, answering one user across several channels (voice, chat, sms, slack, email, chatapp).',
  'Messages starting with "[Real-time update from <channel>]" happened on another channel of the same user; take them into account.',
  'Use the tools when they help; if a tool reports an error, correct the input or explain the problem. Answer briefly.',
].join(' ');

/** The agent's caller: without one it serves nobody and may use no tool. */
const callerOf = (turn: AgentTurn): ToolCaller => turn.caller ?? { kind: 'agent', id: 'agent' };

/** Tool rounds before the model must answer without tools. */
const maxToolRounds = 6;
/** Longest tool result text handed back to the model. */
const maxToolResultChars = 8000;

/** The tools of the person the agent serves: only those they may use themselves (the gateway checks again at each call). */
async function toolSpecs(caller: ToolCaller, exclude: string[] = []): Promise<OpenAI.Chat.Completions.ChatCompletionTool[]> {
  return (await toolsFor(caller)).filter((t) => !exclude.includes(t.executor)).map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) },
  }));
}

/** Runs one tool call; an unknown tool, bad arguments or a failure come back as an error result for the model. */
async function runTool(name: string, rawArguments: string, turn: AgentTurn): Promise<ToolCallRecord> {
  let args: unknown;
  try {
    args = rawArguments.trim() ? JSON.parse(rawArguments) : {};
  } catch {
    return { tool_name: name, arguments: rawArguments, ok: false, result: { error: 'the arguments are not valid JSON' } };
  }
  const tool = await findTool(name);
  if (!tool || turn.excludeExecutors?.includes(tool.executor)) return { tool_name: name, arguments: args, ok: false, result: { error: `unknown tool "${name}"` } };
  // Whatever the model read that made it ask, a change waits for the person's own yes.
  if (tool.changesData) {
    return turn.askFirst ? turn.askFirst(tool, args) : { tool_name: name, arguments: args, ok: false, result: { error: `${name} changes data and needs the person's confirmation, which cannot be asked here.` } };
  }
  try {
    return { tool_name: name, arguments: args, ok: true, result: (await callTool(tool, args, callerOf(turn))) ?? null };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const fields = err instanceof AppError && err.errors.length ? { fields: err.errors } : {};
    return { tool_name: name, arguments: args, ok: false, result: { error, ...fields } };
  }
}

function resultText(result: unknown): string {
  const text = typeof result === 'string' ? result : JSON.stringify(result);
  return text.length > maxToolResultChars ? `${text.slice(0, maxToolResultChars)}… (truncated)` : text;
}

type CompletionRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type AnswerMessage = Pick<OpenAI.Chat.Completions.ChatCompletionMessage, 'content' | 'tool_calls'> | undefined;

/** One model answer; streamed piece by piece to `turn.onToken` when the turn asks for it. */
async function complete(client: OpenAI, request: CompletionRequest, turn: AgentTurn): Promise<AnswerMessage> {
  const options = turn.signal ? { signal: turn.signal } : undefined;
  if (!turn.onToken) return (await client.chat.completions.create(request, options)).choices[0]?.message;
  const stream = await client.chat.completions.create({ ...request, stream: true }, options);
  let content = '';
  const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      content += delta.content;
      turn.onToken(delta.content);
    }
    // Tool calls arrive in pieces by index: the first names the call, later ones extend its arguments.
    for (const piece of delta.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
  }
  return { content: content || null, tool_calls: calls.length ? calls : undefined } as AnswerMessage;
}

async function toolLoop(client: OpenAI, turn: AgentTurn, emit: AgentEvents): Promise<AgentReply> {
  const model = llmModel();
  const tools = await toolSpecs(callerOf(turn), turn.excludeExecutors);
  // Call keys: tool, argument digest and how often that pair was seen in this run (stable across retries of the same dialogue).
  const seen = new Map<string, number>();
  const messages: Message[] = [{ role: 'system', content: systemPrompt }, ...modelHistory(turn.history, turn.channel), { role: 'user', content: turn.message }];
  const calls: ToolCallRecord[] = [];
  for (let round = 0; ; round++) {
    const offerTools = tools.length > 0 && round < maxToolRounds;
    let answer = offerTools ? turn.recordedRounds?.[round] : undefined;
    if (!answer) {
      const message = await complete(client, { model, messages, ...(offerTools ? { tools } : {}) }, turn);
      const toolCalls = (message?.tool_calls ?? []).filter((c) => c.type === 'function');
      if (!offerTools || toolCalls.length === 0) return { reply: message?.content?.trim() || '…', tool_calls: calls, model };
      answer = { content: message?.content ?? null, tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })) };
      await turn.onModelRound?.(round, answer);
    }
    const toolCalls = answer.tool_calls;
    messages.push({ role: 'assistant', content: answer.content, tool_calls: toolCalls });
    for (const call of toolCalls) {
      const name = call.function.name;
      let shownArgs: unknown = call.function.arguments;
      try {
        shownArgs = JSON.parse(call.function.arguments || '{}');
      } catch {
        // Shown as the raw text; runTool reports the error to the model.
      }
      const pair = `${name}:${inputDigest(shownArgs)}`;
      const n = (seen.get(pair) ?? 0) + 1;
      seen.set(pair, n);
      const key = `${pair}:${n}`;
      let record = turn.recorded?.[key];
      if (!record) {
        await emit('TOOL_CALL', { tool_name: name, arguments: shownArgs });
        await turn.onToolStart?.(key, { tool_name: name, arguments: shownArgs });
        record = await runTool(name, call.function.arguments, turn);
        await turn.onToolResult?.(key, record);
        await emit('TOOL_RESULT', { tool_name: name, result: record.result });
      }
      calls.push(record);
      messages.push({ role: 'tool', tool_call_id: call.id, content: resultText(record.result) });
    }
  }
}

/** Answers one turn, emitting TYPING while it works. Model failures propagate (the job retries). */
export async function runAgent(turn: AgentTurn, emit: AgentEvents): Promise<AgentReply> {
  await emit('TYPING', { is_typing: true });
  try {
    const client = llmClient();
    if (!client) return { reply: NO_MODEL_REPLY, tool_calls: [], model: null };
    return await toolLoop(client, turn, emit);
  } finally {
    await emit('TYPING', { is_typing: false });
  }
}
