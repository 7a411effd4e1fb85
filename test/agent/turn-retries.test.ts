/**
 * A retried agent turn does not repeat its tools' side effects: the model (the
 * real openai client against the local OpenAI-format server) asks to create a lead with the CRM tool
 * (which, changing data, waits for the person's yes), then fails on the next call more often than the
 * client retries, so the BullMQ job fails and is retried. The retry replays the recorded model answer
 * and tool result: one question, one TOOL_CALL/TOOL_RESULT, one reply, and on the yes one lead — on
 * the web chat and on the messaging-app channel alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { useLocalLlm, type ChatRequest, type LlmAnswer } from '../helpers/local-llm-server.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../helpers/chatapp.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribe, sendMarker } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';
import { userWithRoles } from '../helpers/people.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { turnJournal } from '../../shared/agent/turn-steps.store.js';

/** Model calls that fail (503) after the tool ran: the openai client tries 3 times, so 3 fail one job attempt. */
let failuresAfterTool = 0;
// A model that records the user as a lead (last name = the message), then says the lead waits for the person's yes.
const llm = await useLocalLlm((req: ChatRequest): LlmAnswer => {
  const message = [...req.body.messages].reverse().find((m) => m.role === 'user')!.content!;
  const tool = req.body.messages.find((m) => m.role === 'tool');
  if (!tool) return { tool_calls: [{ id: 'call_lead', name: 'crm_create_lead', arguments: JSON.stringify({ first_name: 'Retry', last_name: message, source: 'conversation' }) }] };
  if (failuresAfterTool > 0) {
    failuresAfterTool--;
    return { status: 503 };
  }
  return { content: `Lead ${JSON.parse(tool.content!).status}.` };
});
const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const leadsNamed = (lastName: string) => db()('crm_leads').where({ last_name: lastName }).select('id');
const questionsIn = (sessionId: string) => db()('tool_confirmations').where({ session_id: sessionId }).select('status');
const WAITING = /^Lead awaiting_confirmation\.\n\nBefore I do this, please confirm: crm_create_lead /;
const firstRequestsFor = (message: string) =>
  llm.requests.filter((r) => r.body.messages.at(-1)?.role === 'user' && r.body.messages.at(-1)?.content === message).length;

describe('a retried agent turn replays its recorded tool calls', () => {
  it('web chat: the model fails after the lead was asked for; the retried job asks once, emits the tool events once and answers once; the yes creates one lead', async () => {
    const u = await userWithRoles(['sre']);
    const { session } = await resolveSession(u.user_id);
    const sse = subscribe(api.url, session.session_id, 'voice');
    await sse.opened;
    try {
      failuresAfterTool = 3;
      const res = await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'Webchat Retry' } });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(await leadsNamed('Webchat Retry')).toHaveLength(0);
      expect(body).toMatchObject({ status: 'answered', reply: expect.stringMatching(WAITING), tool_calls: [{ tool_name: 'crm_create_lead', ok: false }] });
      expect(await questionsIn(session.session_id)).toEqual([{ status: 'pending' }]);
      expect(failuresAfterTool).toBe(0);
      // The retry did not ask the model for the first step again: it replayed the recorded answer.
      expect(firstRequestsFor('Webchat Retry')).toBe(1);

      const events = (await sse.throughMarker(await sendMarker(api, session.session_id))).filter((e) => e.channel === 'chat');
      const count = (type: string, role?: string) => events.filter((e) => e.event_type === type && (!role || e.data.role === role)).length;
      expect(count('TOOL_CALL')).toBe(1);
      expect(count('TOOL_RESULT')).toBe(1);
      expect(count('MESSAGE', 'assistant')).toBe(1);
      expect(await db()('session_messages').where({ session_id: session.session_id, role: 'assistant' }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: 1 }]);

      // The person's yes creates the lead, once.
      const yes = await api.request('/api/chat', { method: 'POST', json: { user_id: u.user_id, message: 'yes' } });
      expect((await yes.json()).reply).toMatch(/^Done: crm_create_lead /);
      expect(await leadsNamed('Webchat Retry')).toHaveLength(1);
    } finally {
      sse.close();
    }
  });

  it('messaging app: the model fails after the lead was asked for; the retried message asks once and sends one reply; the yes creates one lead', async () => {
    const u = await userWithRoles(['sre']);
    failuresAfterTool = 3;
    expect((await postWebhook(api.url, whatsappParams(u.phone_number, 'Chatapp Retry'))).status).toBe(200);
    const replies = () => twilio.messages.filter((m) => m.params.To === `whatsapp:${u.phone_number}`);
    await eventually(async () => replies().length > 0, 20_000, 'the reply at the provider');
    expect(await leadsNamed('Chatapp Retry')).toHaveLength(0);
    expect(failuresAfterTool).toBe(0);
    expect(firstRequestsFor('Chatapp Retry')).toBe(1);
    const { session } = await resolveSession(u.user_id);
    // The marker is persisted after every event published before it (one lane per session).
    const sse = subscribe(api.url, session.session_id, 'voice');
    await sse.opened;
    await sse.throughMarker(await sendMarker(api, session.session_id));
    sse.close();
    const events = await db()('session_events').where({ session_id: session.session_id }).whereIn('event_type', ['tool_call', 'tool_result']).select('event_type');
    expect(events.map((e) => e.event_type).sort()).toEqual(['tool_call', 'tool_result']);
    // Sent once, with the answer of the retried turn.
    expect(replies().map((m) => m.params.Body)).toEqual([expect.stringMatching(WAITING)]);
    expect(await questionsIn(session.session_id)).toEqual([{ status: 'pending' }]);

    // The person's yes, their next message on the channel, creates the lead, once.
    expect((await postWebhook(api.url, whatsappParams(u.phone_number, 'yes'))).status).toBe(200);
    await eventually(async () => replies().length > 1, 20_000, 'the answer to the yes');
    expect(replies()[1]!.params.Body).toMatch(/^Done: crm_create_lead /);
    expect(await leadsNamed('Chatapp Retry')).toHaveLength(1);
  });

  it('a call started but never recorded (the worker died mid-call) is not run again: the model is told its outcome is unknown', async () => {
    const u = await userWithRoles(['sre']);
    const { session } = await resolveSession(u.user_id);
    const journal = await turnJournal('webchat:interrupted', session.session_id);
    await journal.onToolStart('crm_create_lead:abc:1', { tool_name: 'crm_create_lead', arguments: { last_name: 'x' } });
    const again = await turnJournal('webchat:interrupted', session.session_id);
    expect(again.recorded['crm_create_lead:abc:1']).toMatchObject({ tool_name: 'crm_create_lead', ok: false, result: { error: expect.stringContaining('not repeated') } });
    // The journal goes with the session (user erasure).
    await api.request(`/api/users/${u.user_id}`, { method: 'DELETE' });
    expect(await db()('agent_turn_steps').where({ turn_key: 'webchat:interrupted' })).toEqual([]);
  });
});
