import { beforeAll, describe, expect, it } from 'vitest';
import { NO_MODEL_REPLY, runAgent } from '../../shared/agent/agent.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribe } from '../helpers/sse.js';
import { freshPhone } from '../helpers/chatapp.js';
import { createUser } from '../../shared/users/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';

process.env.LLM_PROVIDER = 'none';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

describe('agent without a model', () => {
  it('LLM_PROVIDER=none answers a fixed text saying no model is configured, and still emits TYPING', async () => {
    const events: unknown[] = [];
    const result = await runAgent({ channel: 'chatapp', history: [], message: 'hello' }, async (type, data) => void events.push([type, data]));
    expect(result).toEqual({ reply: NO_MODEL_REPLY, tool_calls: [], model: null });
    expect(result.reply).toMatch(/no language model is configured/i);
    expect(events).toEqual([['TYPING', { is_typing: true }], ['TYPING', { is_typing: false }]]);
  });

  it('web chat without a model still publishes the message, TYPING and the fixed reply', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const sms = subscribe(api.url, session.session_id, 'sms');
    await sms.opened;
    try {
      const res = await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'anyone there?' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'answered', reply: NO_MODEL_REPLY, tool_calls: [] });
      await sms.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      expect(sms.events.filter((e) => e.event_type !== 'CHANNEL_JOINED').map((e) => [e.event_type, e.data.role ?? e.data.is_typing])).toEqual([
        ['MESSAGE', 'user'],
        ['TYPING', true],
        ['TYPING', false],
        ['MESSAGE', 'assistant'],
      ]);
    } finally {
      sms.close();
    }
  });
});
