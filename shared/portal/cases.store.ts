/** Query module of `portal_cases` (written) and `v_portal_cases_full` (read: cases with requester and assignee names). */
import type { Knex } from 'knex';
import { containsPattern, db } from '../db/index.js';
import type { CaseStatus, PortalCase } from './portal.schemas.js';

const TABLE = 'portal_cases';
const VIEW = 'v_portal_cases_full';
const COLUMNS = [
  'case_id', 'title', 'description', 'status', 'priority', 'requester_id', 'requester_name', 'assignee_id', 'assignee_name',
  'comment_count', 'created_at', 'updated_at', 'resolved_at', 'closed_at',
];

interface CaseRow extends Omit<PortalCase, 'created_at' | 'updated_at' | 'resolved_at' | 'closed_at'> {
  created_at: Date;
  updated_at: Date;
  resolved_at: Date | null;
  closed_at: Date | null;
}

const toDomain = (r: CaseRow): PortalCase => ({
  ...r,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  resolved_at: r.resolved_at?.toISOString() ?? null,
  closed_at: r.closed_at?.toISOString() ?? null,
});

/** Whose cases a caller sees: staff all, everyone else those they requested. */
export interface CaseViewer {
  userId: string;
  staff: boolean;
}

const visible = (q: Knex.QueryBuilder, v: CaseViewer) => (v.staff ? q : q.where('requester_id', v.userId));

export interface CaseFilters {
  status?: CaseStatus[];
  priority?: string;
  assignee_id?: string;
  /** Staff only: just the cases they requested themselves. */
  mine?: boolean;
  /** Words in the title or description (case-insensitive substring). */
  q?: string;
}

export async function listCases(viewer: CaseViewer, f: CaseFilters): Promise<PortalCase[]> {
  const q = visible(db()(VIEW).select(COLUMNS), viewer);
  if (f.status?.length) q.whereIn('status', f.status);
  if (f.priority) q.where({ priority: f.priority });
  if (f.assignee_id) q.where({ assignee_id: f.assignee_id });
  if (f.mine) q.where({ requester_id: viewer.userId });
  if (f.q) {
    const pattern = containsPattern(f.q);
    q.where((w) => w.whereILike('title', pattern).orWhereILike('description', pattern));
  }
  return ((await q.orderBy([{ column: 'priority' }, { column: 'created_at', order: 'desc' }]).limit(500)) as CaseRow[]).map(toDomain);
}

export async function findCase(viewer: CaseViewer, caseId: string): Promise<PortalCase | undefined> {
  const row = (await visible(db()(VIEW).select(COLUMNS).where({ case_id: caseId }), viewer).first()) as CaseRow | undefined;
  return row && toDomain(row);
}

export async function insertCase(input: { requester_id: string; title: string; description: string; priority: string }): Promise<string> {
  const [row] = (await db()(TABLE).insert(input).returning(['case_id'])) as Array<{ case_id: string }>;
  return row!.case_id;
}

/**
 * Moves a case from `from` to `to` (compare-and-set, so two concurrent moves cannot both apply);
 * false when the case was no longer in `from`. resolved_at/closed_at follow the status.
 */
export async function moveCase(caseId: string, from: CaseStatus, to: CaseStatus, k: Knex = db()): Promise<boolean> {
  const stamps: Record<string, unknown> = {};
  if (to === 'resolved') stamps.resolved_at = k.fn.now();
  else if (to !== 'closed') stamps.resolved_at = null;
  stamps.closed_at = to === 'closed' ? k.fn.now() : null;
  return (await k(TABLE).where({ case_id: caseId, status: from }).update({ status: to, ...stamps })) > 0;
}

/** Sets the assignee of a case that is not closed; false when it is closed. */
export async function assignCase(caseId: string, assigneeId: string | null): Promise<boolean> {
  return (await db()(TABLE).where({ case_id: caseId }).whereNot({ status: 'closed' }).update({ assignee_id: assigneeId })) > 0;
}

export async function updateCaseFields(caseId: string, change: { title?: string; description?: string; priority?: string }): Promise<void> {
  if (Object.keys(change).length) await db()(TABLE).where({ case_id: caseId }).update(change);
}

/** People a case can be assigned to: users holding the staff role, by name. */
export async function listStaff(): Promise<Array<{ user_id: string; display_name: string | null; email: string | null }>> {
  return db()('users').select('user_id', 'display_name', 'email').whereRaw("'staff' = any(roles)").orderBy([{ column: 'display_name' }, { column: 'email' }]);
}
