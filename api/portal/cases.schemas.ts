/** Request and response schemas of the case routes beyond the case itself (shared/portal/portal.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { caseSchema, casePriorities, caseStatuses, commentSchema } from '../../shared/portal/portal.schemas.js';
import { flag, list } from './common.schemas.js';

export const caseParams = z.object({ case_id: uuid() });
export const caseQuery = z.object({
  status: list(z.array(z.enum(caseStatuses)).optional()),
  priority: z.enum(casePriorities).optional(),
  assignee_id: uuid().optional(),
  mine: flag,
  q: z.string().trim().max(200).optional(),
});
export const caseList = z.object({ cases: z.array(caseSchema) });
export const caseInput = z.object({ title: z.string().trim().min(1, 'must not be empty').max(200), description: z.string().max(20_000).default(''), priority: z.enum(casePriorities).default('P3') }).strict();
export const caseUpdate = z.object({ title: z.string().trim().min(1, 'must not be empty').max(200), description: z.string().max(20_000), priority: z.enum(casePriorities) }).partial().strict();
export const caseMove = z.object({ status: z.enum(caseStatuses) }).strict();
export const caseCommentInput = z.object({ body: z.string().trim().min(1, 'must not be empty').max(20_000) }).strict();
export const caseAssignment = z.object({ assignee_id: uuid().nullable() }).strict();
/** A case with its comment thread and the statuses the caller may move it to. */
export const caseDetail = caseSchema.extend({ comments: z.array(commentSchema), allowed_moves: z.array(z.enum(caseStatuses)) }).openapi('PortalCaseDetail');
export const staffMember = z.object({ user_id: z.string(), display_name: z.string().nullable(), email: z.string().nullable() }).openapi('StaffMember');
export const staffList = z.object({ staff: z.array(staffMember) });
