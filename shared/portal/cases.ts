/** Support cases: creation, the status rules of case-transitions.ts, comments and assignment. */
import { db } from '../db/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { allowedMoves } from './case-transitions.js';
import { assignCase, findCase, insertCase, moveCase, updateCaseFields, type CaseViewer } from './cases.store.js';
import { insertComment, listComments } from './case-comments.store.js';
import type { CaseStatus, PortalCase } from './portal.schemas.js';

async function visibleCase(viewer: CaseViewer, caseId: string): Promise<PortalCase> {
  const found = await findCase(viewer, caseId);
  if (!found) throw new NotFoundError(`No case ${caseId}.`);
  return found;
}

export const getCase = visibleCase;

export async function caseWithComments(viewer: CaseViewer, caseId: string) {
  const found = await visibleCase(viewer, caseId);
  return { ...found, comments: await listComments(caseId), allowed_moves: movesFor(viewer, found) };
}

const movesFor = (viewer: CaseViewer, c: PortalCase) =>
  allowedMoves(c.status, { staff: viewer.staff, requester: c.requester_id === viewer.userId }, c.resolved_at ? new Date(c.resolved_at) : null);

export async function createCase(viewer: CaseViewer, input: { title: string; description: string; priority: string }): Promise<PortalCase> {
  const id = await insertCase({ requester_id: viewer.userId, ...input });
  return visibleCase(viewer, id);
}

/** Moves a case if the caller may; otherwise 409 naming the moves they have. */
export async function transitionCase(viewer: CaseViewer, caseId: string, to: CaseStatus): Promise<PortalCase> {
  const current = await visibleCase(viewer, caseId);
  const allowed = movesFor(viewer, current);
  if (!allowed.includes(to)) {
    throw new ConflictError(
      `A case that is ${current.status} cannot be moved to ${to} by you; allowed: ${allowed.join(', ') || 'none'}.`,
      [],
      { current_status: current.status, requested: to, allowed_moves: allowed },
    );
  }
  if (!(await moveCase(caseId, current.status, to))) {
    throw new ConflictError('The case changed meanwhile; reload it and try again.', [], { allowed_moves: movesFor(viewer, await visibleCase(viewer, caseId)) });
  }
  return visibleCase(viewer, caseId);
}

/** Adds a comment; the requester answering a case that waits for them puts it back in progress. */
export async function commentOnCase(viewer: CaseViewer, caseId: string, body: string) {
  const current = await visibleCase(viewer, caseId);
  if (current.status === 'closed') throw new ConflictError('The case is closed: open a new case instead.', [], { current_status: 'closed' });
  await db().transaction(async (trx) => {
    await insertComment(caseId, viewer.userId, body, trx);
    if (current.status === 'waiting' && current.requester_id === viewer.userId) await moveCase(caseId, 'waiting', 'in_progress', trx);
  });
  return caseWithComments(viewer, caseId);
}

const closedConflict = (viewer: CaseViewer, c: PortalCase) =>
  new ConflictError('The case is closed: it can no longer be assigned.', [], { current_status: c.status, allowed_moves: movesFor(viewer, c) });

/** Staff assign a case to a staff member (or unassign with null); not a closed case (closed is final). */
export async function assignCaseTo(viewer: CaseViewer, caseId: string, assigneeId: string | null): Promise<PortalCase> {
  const current = await visibleCase(viewer, caseId);
  if (current.status === 'closed') throw closedConflict(viewer, current);
  if (assigneeId) {
    const assignee = (await db()('users').select('roles').where({ user_id: assigneeId }).first()) as { roles: string[] } | undefined;
    if (!assignee?.roles.includes('staff')) {
      throw new ValidationError('The assignee must be a staff member.', [{ path: 'body.assignee_id', message: 'is not a user with the staff role' }]);
    }
  }
  // Closed between the check and the write: the write skips it, and the answer is the same 409.
  if (!(await assignCase(caseId, assigneeId))) throw closedConflict(viewer, await visibleCase(viewer, caseId));
  return visibleCase(viewer, caseId);
}

/** The requester or staff edit title, description or priority while the case is not closed. */
export async function editCase(viewer: CaseViewer, caseId: string, change: { title?: string; description?: string; priority?: string }): Promise<PortalCase> {
  const current = await visibleCase(viewer, caseId);
  if (current.status === 'closed') throw new ConflictError('The case is closed.', [], { current_status: 'closed' });
  await updateCaseFields(caseId, change);
  return visibleCase(viewer, caseId);
}
