/** The support-desk rules of case moves (shared/portal/case-transitions.ts). */
import { describe, expect, it } from 'vitest';
import { allowedMoves, reopenWindowDays } from '../../shared/portal/case-transitions.js';

const staff = { staff: true, requester: false };
const requester = { staff: false, requester: true };
const now = new Date('2026-11-23T12:00:00Z');
const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);

describe('case transitions', () => {
  it('staff work a case through in_progress and waiting to resolved, and close it after resolution', () => {
    expect(allowedMoves('open', staff, null, now)).toEqual(['in_progress', 'waiting', 'resolved', 'closed']);
    expect(allowedMoves('in_progress', staff, null, now)).toEqual(['waiting', 'resolved']);
    expect(allowedMoves('waiting', staff, null, now)).toEqual(['in_progress', 'resolved']);
    expect(allowedMoves('resolved', staff, daysAgo(1), now)).toEqual(['in_progress', 'closed']);
  });

  it(`the requester may close their case any time and reopen it within ${reopenWindowDays} days of resolution`, () => {
    expect(allowedMoves('in_progress', requester, null, now)).toEqual(['closed']);
    expect(allowedMoves('resolved', requester, daysAgo(reopenWindowDays - 1), now)).toEqual(['open', 'closed']);
    expect(allowedMoves('resolved', requester, daysAgo(reopenWindowDays + 1), now)).toEqual(['closed']);
  });

  it('closed is final for everyone; a staff member who requested the case has both sets of moves', () => {
    expect(allowedMoves('closed', { staff: true, requester: true }, null, now)).toEqual([]);
    expect(allowedMoves('resolved', { staff: true, requester: true }, daysAgo(1), now)).toEqual(['in_progress', 'closed', 'open']);
  });
});
