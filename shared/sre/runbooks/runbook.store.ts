/** sre_runbooks: remediation workflows (n8n) bound to alert matchers. */
import { db } from '../../db/index.js';
import { NotFoundError } from '../../errors.js';
import { conflictOnDuplicate } from '../conflicts.js';
import { paged, type OffsetPage } from '../listing.js';
import type { Matcher } from '../automation/matchers.js';

export const TABLE = 'sre_runbooks';

export interface RunbookInput {
  name: string;
  description: string;
  matchers: Matcher[];
  severities: string[];
  auto_trigger: boolean;
  enabled: boolean;
  webhook_url: string;
  workflow_id?: string | null;
  parameters: Record<string, unknown>;
  timeout_seconds: number;
}

type Row = Omit<RunbookInput, 'workflow_id'> & { id: string; workflow_id: string | null; created_at: Date; updated_at: Date };

const toDomain = (r: Row) => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });
export type Runbook = ReturnType<typeof toDomain>;

const toRow = (input: Partial<RunbookInput>) => ({
  ...input,
  ...(input.matchers ? { matchers: JSON.stringify(input.matchers) } : {}),
  ...(input.parameters ? { parameters: JSON.stringify(input.parameters) } : {}),
});

export async function listRunbooks(f: { enabled?: boolean; auto_trigger?: boolean; search?: string; since?: string; until?: string; limit: number; offset: number }): Promise<OffsetPage<Runbook>> {
  const q = db()<Row>(TABLE).select('*');
  if (f.enabled !== undefined) q.where('enabled', f.enabled);
  if (f.auto_trigger !== undefined) q.where('auto_trigger', f.auto_trigger);
  if (f.search) q.whereILike('name', `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  return paged<Row, Runbook>(q, { ...f, orderBy: 'name, id', timeColumn: 'created_at' }, toDomain);
}

export async function getRunbook(id: string): Promise<Runbook> {
  const row = await db()<Row>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`No runbook ${id}.`);
  return toDomain(row);
}

export async function createRunbook(input: RunbookInput): Promise<Runbook> {
  return conflictOnDuplicate(`A runbook named "${input.name}" exists.`, async () => toDomain((await db()(TABLE).insert(toRow(input)).returning('*'))[0] as Row));
}

export async function updateRunbook(id: string, patch: Partial<RunbookInput>): Promise<Runbook> {
  const [row] = await conflictOnDuplicate(`A runbook named "${patch.name}" exists.`, () => db()(TABLE).where({ id }).update(toRow(patch)).returning('*'));
  if (!row) throw new NotFoundError(`No runbook ${id}.`);
  return toDomain(row as Row);
}

export async function deleteRunbook(id: string): Promise<void> {
  if (!(await db()(TABLE).where({ id }).delete())) throw new NotFoundError(`No runbook ${id}.`);
}
