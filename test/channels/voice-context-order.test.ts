/**
 * Issue 39.9: during a call, a message from another channel enters the call's model context when it
 * arrives, before any answer to it. A Slack message and Slack's reply published back to back on the
 * session's bus (as the stream publishes them) end up in the call's context in that order, and the
 * call's spoken answer to the message is asked without the reply that came after it. On the old code
 * the user's message waited for its turn while the reply went in at once: reply first.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { startPlatform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { freshPhone } from '../helpers/chatapp.js';
import { eventually } from '../helpers/eventually.js';
import { createUser } from '../../shared/users/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { acceptMessage } from '../../shared/stream/index.js';
import { publishEvent } from '../../shared/bus.js';
import { VoiceCall } from '../../shared/channels/voice/call.js';
import { openInteraction } from '../../shared/channels/turn.js';
import type { RelayOutbound } from '../../shared/channels/voice/relay-messages.js';

const llm = await useLocalLlm(() => ({ content: 'Noted on the call.' }));
beforeAll(async () => {
  await startPlatform();
});

const slackMessage = (sessionId: string, sequence: number, role: 'user' | 'assistant', content: string) => ({
  id: randomUUID(), sequence, event_type: 'MESSAGE', session_id: sessionId, channel: 'slack', data: { role, content },
});

describe('a message from another channel during a call', () => {
  it('enters the context on arrival, before its reply; the spoken answer to it is asked without that reply', async () => {
    const user = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(user.user_id);
    // Something in the session before the call, so the call's context says when it is live.
    const chat = await openInteraction(session.session_id, 'chat');
    await acceptMessage(session.session_id, { channel: 'chat', role: 'user', content: 'earlier on the web', interaction_id: chat }, { waitMs: 5000 });
    const sent: RelayOutbound[] = [];
    const call = new VoiceCall((m) => sent.push(m));
    try {
      call.receive(JSON.stringify({ type: 'setup', sessionId: 'VX1', callSid: `CA${randomBytes(8).toString('hex')}`, from: user.phone_number, to: '+15005550006' }));
      await eventually(() => call.context.length > 0, 10_000, 'the call connected to its session');

      const asked = 'Here is the new date: Friday 10:00';
      const answered = 'Thanks, Friday 10:00 it is.';
      const sequence = Date.now();
      await Promise.all([
        publishEvent(slackMessage(session.session_id, sequence, 'user', asked)),
        publishEvent(slackMessage(session.session_id, sequence + 1, 'assistant', answered)),
      ]);

      const update = `[Real-time update from slack] user: ${asked}`;
      const request = await eventually(() => llm.requests.find((r) => r.body.messages.at(-1)!.content === update), 10_000, 'the call asking its model about the Slack message');
      // The model is asked about the message with what came before it, not with the reply it got on Slack afterwards.
      expect(request.body.messages.map((m) => m.content)).not.toContain(`[Real-time update from slack] assistant: ${answered}`);
      await eventually(() => call.context.some((e) => e.channel === 'voice' && e.role === 'assistant'), 10_000, 'the spoken answer in the context');
      expect(call.context.map((e) => `${e.channel} ${e.role}: ${e.content}`)).toEqual([
        'chat user: earlier on the web',
        `slack user: ${asked}`,
        `slack assistant: ${answered}`,
        'voice assistant: Noted on the call.',
      ]);
    } finally {
      await call.end();
    }
  });
});
