import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from '../../../shared/zod.js';
import { defineTool, registerTools } from '../../../shared/tools.js';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { useLocalLlm } from '../../helpers/local-llm-server.js';
import { subscribe } from '../../helpers/sse.js';
import { freshPhone } from '../../helpers/chatapp.js';
import { createUser } from '../../../shared/users/users.store.js';
import { resolveSession } from '../../../shared/sessions/resolve.js';
import { getContext } from '../../../shared/sessions/context.js';

// A model that looks up the order the user names, then answers from the tool result.
const llm = await useLocalLlm((req) => {
  const tool = req.body.messages.find((m) => m.role === 'tool');
  if (!tool) return { tool_calls: [{ id: 'call_1', name: 'test_order_status', arguments: JSON.stringify({ order: 'A-17' }) }] };
  return { content: `Order A-17 is ${JSON.parse(tool.content!).status}.` };
});

registerTools([
  defineTool({
    name: 'test_order_status',
    description: 'Status of an order',
    executor: 'test',
    changesData: false,
    // Any person's assistant may look up an order.
    access: { roles: ['user'], scope: 'tools' },
    input: z.object({ order: z.string() }),
    handler: async ({ order }) => ({ order, status: 'shipped' }),
  }),
]);

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

describe('POST /api/chat', () => {
  it('publishes the user message at once, TYPING and TOOL_CALL/TOOL_RESULT while the agent runs, then the reply, and returns it', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const voice = subscribe(api.url, session.session_id, 'voice');
    await voice.opened;
    try {
      const res = await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'Where is my order?' } });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({
        session_id: session.session_id,
        resumed: true,
        status: 'answered',
        reply: 'Order A-17 is shipped.',
        tool_calls: [{ tool_name: 'test_order_status', ok: true }],
      });

      await voice.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      const seen = voice.events.filter((e) => e.event_type !== 'CHANNEL_JOINED').map((e) => [e.event_type, e.channel, e.data.role ?? e.data.is_typing ?? e.data.tool_name]);
      expect(seen).toEqual([
        ['MESSAGE', 'chat', 'user'],
        ['TYPING', 'chat', true],
        ['TOOL_CALL', 'chat', 'test_order_status'],
        ['TOOL_RESULT', 'chat', 'test_order_status'],
        ['TYPING', 'chat', false],
        ['MESSAGE', 'chat', 'assistant'],
      ]);
      const call = voice.events.find((e) => e.event_type === 'TOOL_CALL')!;
      const result = voice.events.find((e) => e.event_type === 'TOOL_RESULT')!;
      expect(call.data.arguments).toEqual({ order: 'A-17' });
      expect(result.data.result).toEqual({ order: 'A-17', status: 'shipped' });
      const reply = voice.events.find((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant')!;
      expect(reply.data).toMatchObject({ content: 'Order A-17 is shipped.', interaction_id: body.interaction_id, metadata: { turn_id: body.turn_id } });
      expect(reply.data.message_id).toBe(body.reply_message_id);

      const history = (await getContext(session.session_id)).conversation_history;
      expect(history.slice(-2)).toEqual([
        { role: 'user', content: 'Where is my order?', channel: 'chat' },
        { role: 'assistant', content: 'Order A-17 is shipped.', channel: 'chat' },
      ]);
      // The model saw the user's message once, as the last entry.
      const lastRequest = llm.requests.at(-1)!;
      expect(lastRequest.body.messages.filter((m) => m.content === 'Where is my order?')).toHaveLength(1);
    } finally {
      voice.close();
    }
  });

  it('continues the given interaction and creates a session for a user without one', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const first = await (await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'one' } })).json();
    expect(first.resumed).toBe(false);
    const second = await (await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'two', interaction_id: first.interaction_id } })).json();
    expect(second).toMatchObject({ session_id: first.session_id, interaction_id: first.interaction_id, status: 'answered' });
  });

  it('an unknown user or an interaction of another session is a 404; bad input a 400 naming each field', async () => {
    const unknown = await api.request('/api/chat', { method: 'POST', json: { user_id: '00000000-0000-4000-8000-000000000000', message: 'hi' } });
    expect(unknown.status).toBe(404);
    const a = await createUser({ phone_number: freshPhone() });
    const b = await createUser({ phone_number: freshPhone() });
    const other = await (await api.request('/api/chat', { method: 'POST', json: { user_id: a.user_id, message: 'hi' } })).json();
    const foreign = await api.request('/api/chat', { method: 'POST', json: { user_id: b.user_id, message: 'hi', interaction_id: other.interaction_id } });
    expect(foreign.status).toBe(404);
    const bad = await api.request('/api/chat', { method: 'POST', json: { user_id: 'nope', message: '' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()).errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(['body.message', 'body.user_id']);
  });

  it('the request and response shapes are in the API reference', async () => {
    const doc = await (await api.request('/api/openapi.json')).json();
    const op = doc.paths['/api/chat'].post;
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebChatRequest');
    expect(op.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/WebChatResponse');
    expect(Object.keys(doc.components.schemas.WebChatResponse.properties)).toEqual(
      expect.arrayContaining(['session_id', 'interaction_id', 'reply', 'tool_calls', 'status']),
    );
  });
});
