/** Query module of `portal_case_comments`: a case's comment thread. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { CaseComment } from './portal.schemas.js';

const TABLE = 'portal_case_comments';

export async function listComments(caseId: string): Promise<CaseComment[]> {
  const rows = (await db()(`${TABLE} as m`)
    .select('m.comment_id', 'm.case_id', 'm.author_id', 'u.display_name as author_name', 'm.body', 'm.created_at')
    .join('users as u', 'u.user_id', 'm.author_id')
    .where('m.case_id', caseId)
    .orderBy([{ column: 'm.created_at' }, { column: 'm.comment_id' }])) as Array<Omit<CaseComment, 'created_at'> & { created_at: Date }>;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

export async function insertComment(caseId: string, authorId: string, body: string, k: Knex = db()): Promise<string> {
  const [row] = (await k(TABLE).insert({ case_id: caseId, author_id: authorId, body }).returning(['comment_id'])) as Array<{ comment_id: string }>;
  return row!.comment_id;
}
