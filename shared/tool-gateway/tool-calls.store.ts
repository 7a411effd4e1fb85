/** Query module of `tool_calls`: the audit of every tool-gateway call (inputs only as a SHA-256 digest). */
import { db } from '../db/index.js';
import { paged, type OffsetPage } from '../sre/listing.js';
import type { ToolCaller } from '../tools.js';

const TABLE = 'tool_calls';
const COLUMNS = ['id', 'tool', 'executor', 'caller_kind', 'caller_id', 'user_id', 'outcome', 'error', 'duration_ms', 'input_sha256', 'result_bytes', 'created_at'];

export const toolCallOutcomes = ['ok', 'invalid_input', 'error', 'timeout', 'too_large', 'unknown_tool', 'forbidden'] as const;
export type ToolCallOutcome = (typeof toolCallOutcomes)[number];

export interface ToolCallRow {
  id: string;
  tool: string;
  executor: string;
  caller_kind: ToolCaller['kind'];
  caller_id: string;
  /** The person the call acted for (their own call, or the agent serving them). */
  user_id: string | null;
  outcome: ToolCallOutcome;
  error: string | null;
  duration_ms: number;
  input_sha256: string;
  result_bytes: number | null;
  created_at: Date;
}

export type NewToolCall = Omit<ToolCallRow, 'id' | 'created_at'>;

/** Records one call. */
export async function recordToolCall(call: NewToolCall): Promise<void> {
  await db()(TABLE).insert(call);
}

export interface ToolCallFilter {
  tool?: string;
  executor?: string;
  outcome?: ToolCallOutcome;
  caller_id?: string;
  user_id?: string;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

/** Calls, newest first. */
export async function listToolCalls(f: ToolCallFilter): Promise<OffsetPage<ToolCallRow>> {
  const q = db()(TABLE).select(COLUMNS);
  if (f.tool) q.where('tool', f.tool);
  if (f.executor) q.where('executor', f.executor);
  if (f.outcome) q.where('outcome', f.outcome);
  if (f.caller_id) q.where('caller_id', f.caller_id);
  if (f.user_id) q.where('user_id', f.user_id);
  return paged(q, { ...f, orderBy: 'created_at desc, id', timeColumn: 'created_at' }, (r: ToolCallRow) => r);
}
