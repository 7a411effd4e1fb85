/**
 * Who may move a support case where (spec 002 leaves the transitions open). Staff work the case;
 * the requester can withdraw (close) their own case at any point and reopen it shortly after it was
 * resolved, when the fix did not hold. Closed is final: a new problem is a new case.
 */
import type { CaseStatus } from './portal.schemas.js';

/** How long after resolution the requester may reopen instead of opening a new case. */
export const reopenWindowDays = 14;

const staffMoves: Record<CaseStatus, CaseStatus[]> = {
  open: ['in_progress', 'waiting', 'resolved', 'closed'],
  in_progress: ['waiting', 'resolved'],
  waiting: ['in_progress', 'resolved'],
  resolved: ['in_progress', 'closed'],
  closed: [],
};

const requesterMoves: Record<CaseStatus, CaseStatus[]> = {
  open: ['closed'],
  in_progress: ['closed'],
  waiting: ['closed'],
  resolved: ['open', 'closed'],
  closed: [],
};

export interface Mover {
  staff: boolean;
  requester: boolean;
}

/** The statuses `who` may move a case to from `status` (resolved `resolvedAt`, for the reopen window). */
export function allowedMoves(status: CaseStatus, who: Mover, resolvedAt: Date | null, now = new Date()): CaseStatus[] {
  const moves = new Set<CaseStatus>();
  if (who.staff) staffMoves[status].forEach((s) => moves.add(s));
  if (who.requester) {
    for (const s of requesterMoves[status]) {
      const reopen = status === 'resolved' && s === 'open';
      if (reopen && (!resolvedAt || now.getTime() - resolvedAt.getTime() > reopenWindowDays * 86_400_000)) continue;
      moves.add(s);
    }
  }
  return [...moves];
}

/** The rules as the API reference shows them. */
export const transitionsMarkdown = [
  '| from | staff may move to | requester may move to |',
  '|---|---|---|',
  ...(Object.keys(staffMoves) as CaseStatus[]).map(
    (s) => `| ${s} | ${staffMoves[s].join(', ') || '—'} | ${requesterMoves[s].map((m) => (s === 'resolved' && m === 'open' ? `open (reopen, within ${reopenWindowDays} days of resolution)` : m)).join(', ') || '—'} |`,
  ),
  '',
  'Closed is final. A move not in the table answers 409 naming the moves allowed to the caller. A comment by the requester on a `waiting` case (waiting for the requester) moves it back to `in_progress`.',
].join('\n');
