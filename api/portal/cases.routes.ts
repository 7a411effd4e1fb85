/** The portal's support cases: requesters open and follow them, staff work every case. */
import { ApiRouter } from '../routing.js';
import { NotFoundError } from '../../shared/errors.js';
import { listCases, listStaff } from '../../shared/portal/cases.store.js';
import { assignCaseTo, caseWithComments, commentOnCase, createCase, editCase, transitionCase } from '../../shared/portal/cases.js';
import { transitionsMarkdown } from '../../shared/portal/case-transitions.js';
import { caseSchema } from '../../shared/portal/portal.schemas.js';
import { actingUserNote, callerOf, portalRouter } from './caller.js';
import { userHeader } from './common.schemas.js';
import { caseAssignment, caseCommentInput, caseDetail, caseInput, caseList, caseMove, caseParams, caseQuery, caseUpdate, staffList } from './cases.schemas.js';

export function caseRoutes(): ApiRouter {
  const tags = ['portal: cases'];
  const visibility = 'Requesters see the cases they opened; staff (role staff) see and work every case. A case the caller cannot see answers 404.';
  return portalRouter()
    .route({
      method: 'get',
      path: '/api/portal/cases',
      tags,
      summary: 'Support cases',
      description: `${visibility} Filters: \`status\` (comma-separated), \`priority\`, \`assignee_id\`, \`mine=true\` (only cases I opened), \`q\` (text in the title or description). P1 first, then newest. Served from v_portal_cases_full. ${actingUserNote}`,
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        query: caseQuery,
      },
      responses: { 200: { description: 'Cases', schema: caseList } },
      handler: async ({ query }, ctx) => ({ cases: await listCases(callerOf(ctx), query) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases',
      tags,
      summary: 'Open a case',
      description: `The caller is the requester; the case starts open. ${actingUserNote}`,
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        body: caseInput,
      },
      responses: { 201: { description: 'The case', schema: caseSchema } },
      handler: async ({ body }, ctx) => createCase(callerOf(ctx), body),
    })
    .route({
      method: 'get',
      path: '/api/portal/cases/{case_id}',
      tags,
      summary: 'A case with its comment thread',
      description: `${visibility} \`allowed_moves\`: the statuses the caller may move it to. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: caseParams },
      responses: { 200: { description: 'The case', schema: caseDetail } },
      handler: async ({ params: p }, ctx) => caseWithComments(callerOf(ctx), p.case_id),
    })
    .route({
      method: 'patch',
      path: '/api/portal/cases/{case_id}',
      tags,
      summary: 'Edit title, description or priority',
      description: `The requester or staff, while the case is not closed (409). Status moves go through /status. ${actingUserNote}`,
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        params: caseParams,
        body: caseUpdate,
      },
      responses: { 200: { description: 'The case', schema: caseSchema } },
      errors: { 409: 'The case is closed' },
      handler: async ({ params: p, body }, ctx) => editCase(callerOf(ctx), p.case_id, body),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/status',
      tags,
      summary: 'Move a case to another status',
      description: `${transitionsMarkdown}\n\n${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: caseParams, body: caseMove },
      responses: { 200: { description: 'The moved case', schema: caseSchema } },
      errors: { 409: 'The move is not allowed to the caller from the current status; the problem names `allowed_moves`' },
      handler: async ({ params: p, body }, ctx) => transitionCase(callerOf(ctx), p.case_id, body.status),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/comments',
      tags,
      summary: 'Comment on a case',
      description: `The requester or staff; not on a closed case (409). A requester's comment on a waiting case moves it back to in_progress. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: caseParams, body: caseCommentInput },
      responses: { 201: { description: 'The case with its thread', schema: caseDetail } },
      errors: { 409: 'The case is closed' },
      handler: async ({ params: p, body }, ctx) => commentOnCase(callerOf(ctx), p.case_id, body.body),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/assign',
      tags,
      summary: 'Assign a case (staff)',
      description: `Staff only (role staff; an API-key caller's X-User-Id must be staff). \`assignee_id\`: a user with the staff role, or null to unassign. Not on a closed case (closed is final): 409, whose problem names \`current_status\` and \`allowed_moves\` (none), as a refused status move does. ${actingUserNote}`,
      auth: 'key-or-staff',
      request: { headers: userHeader, params: caseParams, body: caseAssignment },
      responses: { 200: { description: 'The case', schema: caseSchema } },
      errors: { 409: 'The case is closed; the problem names `current_status` and `allowed_moves`' },
      handler: async ({ params: p, body }, ctx) => {
        const caller = callerOf(ctx);
        if (!caller.staff) throw new NotFoundError(`No case ${p.case_id}.`);
        return assignCaseTo(caller, p.case_id, body.assignee_id);
      },
    });
}

/** Who a case can be assigned to: staff only, and acting for nobody (no X-User-Id needed). */
export function staffRoutes(): ApiRouter {
  const tags = ['portal: cases'];
  return new ApiRouter().route({
    method: 'get',
    path: '/api/portal/staff',
    tags,
    summary: 'People a case can be assigned to (staff)',
    description: 'Users holding the staff role, by name: the choices of POST /api/portal/cases/{case_id}/assign.',
    auth: 'key-or-staff',
    responses: { 200: { description: 'Staff members', schema: staffList } },
    handler: async () => ({ staff: await listStaff() }),
  });
}
