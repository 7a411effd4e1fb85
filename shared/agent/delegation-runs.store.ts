/** Query module of `agent_delegation_runs`: tasks handed to the agent through the tool gateway. */
import { db } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import type { ToolCallRecord } from './agent.js';
import type { Authority } from '../auth/scopes.js';

const TABLE = 'agent_delegation_runs';
const COLUMNS = ['id', 'user_id', 'session_id', 'interaction_id', 'task', 'status', 'answer', 'error', 'tool_results', 'requested_by', 'authority', 'finished_at', 'created_at', 'updated_at'];

export type DelegationStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface DelegationRun {
  id: string;
  user_id: string;
  session_id: string;
  interaction_id: string;
  task: string;
  status: DelegationStatus;
  answer: string | null;
  error: string | null;
  /** Tool results by call key (see AgentTurn.recorded). */
  tool_results: Record<string, ToolCallRecord>;
  requested_by: string;
  /** With whose rights the delegated agent works (the caller that asked). */
  authority: Authority;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertRun(input: Pick<DelegationRun, 'user_id' | 'session_id' | 'interaction_id' | 'task' | 'requested_by' | 'authority'>): Promise<DelegationRun> {
  const [row] = await db()(TABLE).insert({ ...input, authority: JSON.stringify(input.authority) }).returning(COLUMNS);
  return row as DelegationRun;
}

export async function getRun(id: string): Promise<DelegationRun> {
  const row = (await db()(TABLE).select(COLUMNS).where({ id }).first()) as DelegationRun | undefined;
  if (!row) throw new NotFoundError(`No delegation run ${id}.`);
  return row;
}

/** queued → running (a retry of a running run stays running). */
export async function markRunning(id: string): Promise<void> {
  await db()(TABLE).where({ id }).whereIn('status', ['queued', 'running']).update({ status: 'running' });
}

/** Records one tool result under its call key (one statement: concurrent keys do not overwrite each other). */
export async function recordToolResult(id: string, key: string, record: ToolCallRecord): Promise<void> {
  await db()(TABLE)
    .where({ id })
    .update({ tool_results: db().raw('tool_results || jsonb_build_object(?::text, ?::jsonb)', [key, JSON.stringify(record)]) });
}

export async function finishRun(id: string, outcome: { status: 'completed'; answer: string } | { status: 'failed'; error: string }): Promise<void> {
  await db()(TABLE)
    .where({ id })
    .update({ ...outcome, finished_at: db().fn.now() });
}
