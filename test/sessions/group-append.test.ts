/**
 * Group commit of message appends (shared/sessions/messages.store.ts appendMessages and the worker's
 * GroupAppender in deliver.ts): one statement per group, each message at most once, and one bad
 * message does not fail the others of its group.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { deliver } from '../../shared/sessions/deliver.js';
import { appendMessages, type AppendMessage } from '../../shared/sessions/messages.store.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { newInteraction, newSession } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

async function liveSession() {
  const { sessionId } = await newSession(api);
  return { sessionId, interactionId: await newInteraction(api, sessionId, 'chat') };
}

const appendInput = (s: { sessionId: string; interactionId: string }, content: string, extra: Partial<AppendMessage> = {}): AppendMessage => ({
  message_id: randomUUID(),
  session_id: s.sessionId,
  interaction_id: s.interactionId,
  channel: 'chat',
  role: 'user',
  content,
  metadata: {},
  idempotency_key: null,
  envelope: { event_type: 'MESSAGE', session_id: s.sessionId, channel: 'chat', data: { content } },
  ...extra,
});

const lastSeq = async (sessionId: string) => Number((await db()('sessions').select('last_seq').where({ session_id: sessionId }).first()).last_seq);

describe('appending a group of messages', () => {
  it('appends one message per session in one statement, each at its session’s next sequence, with its audit row', async () => {
    const sessions = await Promise.all([liveSession(), liveSession(), liveSession()]);
    const before = await Promise.all(sessions.map((s) => lastSeq(s.sessionId)));
    const batch = sessions.map((s, i) => appendInput(s, `group ${i}`));
    const outcomes = await appendMessages(batch, 50);
    expect(outcomes).toEqual(before.map((seq) => ({ kind: 'appended', sequence: seq + 1 })));
    for (const [i, s] of sessions.entries()) {
      const row = await db()('session_messages').where({ message_id: batch[i]!.message_id }).first();
      expect(row).toMatchObject({ session_id: s.sessionId, content: `group ${i}`, sequence: before[i]! + 1 });
      const audit = await db()('session_events').where({ session_id: s.sessionId, event_type: 'message_published', sequence: before[i]! + 1 }).first();
      expect(audit.payload.data.sequence).toBe(before[i]! + 1);
    }
  });

  it('reports a message appended before, and one of a session that is gone, while appending the rest', async () => {
    const [a, b] = await Promise.all([liveSession(), liveSession()]);
    const first = appendInput(a, 'first');
    const [firstOutcome] = await appendMessages([first], 50);
    const seqA = await lastSeq(a.sessionId);
    const orphan = appendInput({ sessionId: randomUUID(), interactionId: a.interactionId }, 'nowhere', { interaction_id: null });
    const fresh = appendInput(b, 'fresh');
    const outcomes = await appendMessages([first, orphan, fresh], 50);
    expect(outcomes[0]).toEqual({ kind: 'already', sequence: (firstOutcome as { sequence: number }).sequence });
    expect(outcomes[1]).toEqual({ kind: 'no-session' });
    expect(outcomes[2]).toMatchObject({ kind: 'appended' });
    expect(await lastSeq(a.sessionId)).toBe(seqA);
    expect(await db()('session_messages').where({ message_id: orphan.message_id })).toHaveLength(0);
  });

  it('appends several messages of one session in one statement, at consecutive sequences in batch order', async () => {
    const [a, b] = await Promise.all([liveSession(), liveSession()]);
    const [seqA, seqB] = await Promise.all([lastSeq(a.sessionId), lastSeq(b.sessionId)]);
    const batch = [appendInput(a, 'x'), appendInput(b, 'only'), appendInput(a, 'y'), appendInput(a, 'z')];
    const outcomes = await appendMessages(batch, 50);
    expect(outcomes).toEqual([seqA + 1, seqB + 1, seqA + 2, seqA + 3].map((sequence) => ({ kind: 'appended', sequence })));
    const rows = await db()('session_messages').where({ session_id: a.sessionId }).orderBy('sequence');
    expect(rows.map((r: { content: string }) => r.content)).toEqual(['x', 'y', 'z']);
    expect((await db()('sessions').where({ session_id: a.sessionId }).first()).context.last_channel).toBe('chat');
    const audit = await db()('session_events').where({ session_id: a.sessionId, event_type: 'message_published' }).orderBy('sequence');
    expect(audit.map((r: { sequence: number; payload: { data: { content: string; sequence: number } } }) => [Number(r.sequence), r.payload.data.content, r.payload.data.sequence])).toEqual([
      [seqA + 1, 'x', seqA + 1],
      [seqA + 2, 'y', seqA + 2],
      [seqA + 3, 'z', seqA + 3],
    ]);
  });

  it('a repeated idempotency key in a concurrent group fails only its own message', async () => {
    const sessions = await Promise.all([liveSession(), liveSession(), liveSession(), liveSession()]);
    const job = (s: { sessionId: string; interactionId: string }, content: string, key: string | null) => ({
      kind: 'message' as const,
      session_id: s.sessionId,
      message_id: randomUUID(),
      channel: 'chat' as const,
      role: 'user' as const,
      content,
      interaction_id: s.interactionId,
      metadata: {},
      idempotency_key: key,
    });
    const taken = await deliver(job(sessions[0]!, 'keyed', 'k-1'));
    expect(taken?.sequence).toBeGreaterThan(0);
    // Delivered in one tick: the worker's appender writes them as one group, which the repeated key fails.
    const results = await Promise.all([job(sessions[0]!, 'repeat', 'k-1'), ...sessions.slice(1).map((s, i) => job(s, `other ${i}`, null))].map((j) => deliver(j)));
    expect(results[0]).toBeUndefined();
    for (const event of results.slice(1)) expect(event).toMatchObject({ event_type: 'MESSAGE', sequence: expect.any(Number) });
    const contents = await db()('session_messages').whereIn('session_id', sessions.map((s) => s.sessionId)).pluck('content');
    expect(contents.sort()).toEqual(['keyed', 'other 0', 'other 1', 'other 2']);
  });
});
