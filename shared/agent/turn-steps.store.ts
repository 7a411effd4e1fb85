/**
 * Query module of `agent_turn_steps`: the journal of one agent turn (a web chat turn, an inbound
 * messaging-app message, a delegated run). Each model answer that asked for tools and each tool call (intent before it
 * runs, result after) is recorded, so a retried job replays the turn up to where it failed instead of
 * running its tools again.
 */
import { db } from '../db/index.js';
import type { AgentTurn, ModelRound, ToolCallRecord } from './agent.js';

const TABLE = 'agent_turn_steps';

interface Row {
  turn_key: string;
  step_key: string;
  session_id: string;
  status: 'started' | 'done';
  data: unknown;
}

const roundKey = (round: number) => `model:${round}`;
const roundOf = (key: string) => (key.startsWith('model:') ? Number(key.slice('model:'.length)) : undefined);

/** The answer a tool call gets when an earlier attempt started it but recorded no result. */
export function interruptedCall(intent: Pick<ToolCallRecord, 'tool_name' | 'arguments'>): ToolCallRecord {
  return {
    ...intent,
    ok: false,
    result: {
      error: 'An earlier attempt of this turn started this call but was interrupted before its result was recorded, so it was not repeated. Check whether it took effect before calling the tool again.',
    },
  };
}

async function record(row: Row): Promise<void> {
  await db()(TABLE)
    .insert({ ...row, data: JSON.stringify(row.data) })
    .onConflict(['turn_key', 'step_key'])
    .merge(['status', 'data']);
}

/** The journal hooks of a turn, with what earlier attempts recorded (spread into the AgentTurn). */
export type TurnJournal = Required<Pick<AgentTurn, 'recorded' | 'recordedRounds' | 'onToolStart' | 'onToolResult' | 'onModelRound'>>;

/** Reads the turn's journal and returns the hooks that extend it. */
export async function turnJournal(turnKey: string, sessionId: string): Promise<TurnJournal> {
  const rows = (await db()(TABLE).select('step_key', 'status', 'data').where({ turn_key: turnKey })) as Array<Pick<Row, 'step_key' | 'status' | 'data'>>;
  const recorded: Record<string, ToolCallRecord> = {};
  const recordedRounds: Record<number, ModelRound> = {};
  for (const row of rows) {
    const round = roundOf(row.step_key);
    if (round !== undefined) recordedRounds[round] = row.data as ModelRound;
    else recorded[row.step_key] = row.status === 'done' ? (row.data as ToolCallRecord) : interruptedCall(row.data as ToolCallRecord);
  }
  const step = (step_key: string, status: Row['status'], data: unknown) => record({ turn_key: turnKey, step_key, session_id: sessionId, status, data });
  return {
    recorded,
    recordedRounds,
    onModelRound: (round, answer) => step(roundKey(round), 'done', answer),
    onToolStart: (key, intent) => step(key, 'started', intent),
    onToolResult: (key, result) => step(key, 'done', result),
  };
}
