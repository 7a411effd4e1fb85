/** sre_incident_rules: which firing alerts open (or join) an incident, and how they are grouped. */
import { db } from '../../db/index.js';
import { NotFoundError } from '../../errors.js';
import { conflictOnDuplicate } from '../conflicts.js';
import { paged, type OffsetPage } from '../listing.js';
import type { Matcher } from '../automation/matchers.js';

export const TABLE = 'sre_incident_rules';

interface Row {
  id: string;
  name: string;
  matchers: Matcher[];
  severities: string[];
  group_by: string[];
  incident_severity: string | null;
  position: number;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface IncidentRuleInput {
  name: string;
  matchers: Matcher[];
  severities: string[];
  group_by: string[];
  incident_severity?: string | null;
  position: number;
  enabled: boolean;
}

const toDomain = (r: Row) => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });
export type IncidentRule = ReturnType<typeof toDomain>;

const toRow = (input: Partial<IncidentRuleInput>) => ({ ...input, ...(input.matchers ? { matchers: JSON.stringify(input.matchers) } : {}) });

export async function listRules(f: { enabled?: boolean; since?: string; until?: string; limit: number; offset: number }): Promise<OffsetPage<IncidentRule>> {
  const q = db()<Row>(TABLE).select('*');
  if (f.enabled !== undefined) q.where('enabled', f.enabled);
  return paged<Row, IncidentRule>(q, { ...f, orderBy: 'position, created_at, id', timeColumn: 'created_at' }, toDomain);
}

export async function getRule(id: string): Promise<IncidentRule> {
  const row = await db()<Row>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`No incident rule ${id}.`);
  return toDomain(row);
}

export async function createRule(input: IncidentRuleInput): Promise<IncidentRule> {
  return conflictOnDuplicate(`An incident rule named "${input.name}" exists.`, async () => toDomain((await db()(TABLE).insert(toRow(input)).returning('*'))[0] as Row));
}

export async function updateRule(id: string, patch: Partial<IncidentRuleInput>): Promise<IncidentRule> {
  const [row] = await conflictOnDuplicate(`An incident rule named "${patch.name}" exists.`, () => db()(TABLE).where({ id }).update(toRow(patch)).returning('*'));
  if (!row) throw new NotFoundError(`No incident rule ${id}.`);
  return toDomain(row as Row);
}

export async function deleteRule(id: string): Promise<void> {
  if (!(await db()(TABLE).where({ id }).delete())) throw new NotFoundError(`No incident rule ${id}.`);
}
