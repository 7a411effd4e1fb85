import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { acceptMessage } from '../../shared/stream/index.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { newInteraction, newSession } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session lanes', () => {
  it('waves of messages accepted while earlier groups are on their way keep each session in acceptance order', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const { sessionId } = await newSession(api);
        return { sessionId, chat: await newInteraction(api, sessionId, 'chat') };
      }),
    );
    const send = (s: (typeof sessions)[number], content: string) =>
      acceptMessage(s.sessionId, { channel: 'chat', role: 'user', content, interaction_id: s.chat, metadata: {} }, { waitMs: 10_000 });
    // Known live from here on: the waves below are accepted without a database check, in call order.
    for (const s of sessions) await send(s, 'first');

    // Each wave is more than a lane lets wait before it sends a second group, and leaves while the
    // waves before it are still being added or published.
    const accepted: Array<{ session: string; content: string; result: ReturnType<typeof send> }> = [];
    for (let wave = 0; wave < 6; wave++) {
      for (let i = 0; i < 10; i++) for (const s of sessions) accepted.push({ session: s.sessionId, content: `w${wave}-${i}`, result: send(s, `w${wave}-${i}`) });
      await sleep(wave % 2 ? 0 : 2);
    }
    const results = await Promise.all(accepted.map((a) => a.result));
    expect(results.every((r) => r.message_published)).toBe(true);

    for (const s of sessions) {
      const mine = accepted.map((a, i) => ({ ...a, sequence: results[i]!.sequence! })).filter((a) => a.session === s.sessionId);
      const sequences = mine.map((m) => m.sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
      // What the audit log recorded, by sequence, is the acceptance order too.
      const audit = await db()('session_events').where({ session_id: s.sessionId, event_type: 'message_published' }).orderBy('sequence');
      expect(audit.map((row) => row.payload.data.content)).toEqual(['first', ...mine.map((m) => m.content)]);
    }
  });
});
