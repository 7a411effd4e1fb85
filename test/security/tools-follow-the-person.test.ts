/**
 * The assistant acts with the rights of the person it serves: it is offered only the tools that
 * person may use through the API, and the gateway checks identity and role again when a call runs
 * (a model that asks for a tool it was not offered is refused). Delegation works only in the caller's
 * own session; audit rows name the person or key that acted.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useLocalLlm, type ChatRequest } from '../helpers/local-llm-server.js';
import { startIdentity, signIn, type SignedIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';

// A model that calls the tool the user names ("call <tool> <json args>") and answers with the tool's result.
const llm = await useLocalLlm((req: ChatRequest) => {
  const last = req.body.messages[req.body.messages.length - 1]!;
  if (last.role === 'tool') return { content: `RESULT ${last.content}` };
  const m = /^call (\w+) (.*)$/s.exec(last.content ?? '');
  if (!m) return { content: 'no call' };
  return { tool_calls: [{ id: `call_${req.body.messages.length}`, name: m[1]!, arguments: m[2]! }] };
});
process.env.LLM_MODEL = 'test-model';

const idp = await startIdentity();
let api: Platform;
let pat: SignedIn;
let sam: SignedIn;
let patId: string;
let samId: string;
beforeAll(async () => {
  api = await startPlatform({ port: idp.appPort });
  pat = await signIn(api.url, 'user');
  sam = await signIn(api.url, 'sre');
  patId = (await (await pat.request('/api/portal/profile')).json()).user_id;
  samId = (await (await sam.request('/api/portal/profile')).json()).user_id;
});

/** Sends a portal chat message as the person and returns the reply and the tools the model was offered. */
async function chat(who: SignedIn, message: string) {
  const before = llm.requests.length;
  const res = await who.request('/api/portal/chat', { method: 'POST', json: { message } });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = await res.json();
  const offered = llm.requests[before]!.body.tools?.map((t) => t.function.name) ?? [];
  return { reply: body.reply as string, offered };
}

describe('tools follow the person', () => {
  it("a portal user's assistant is offered only the tools over their own documents, contacts, cases and sessions", async () => {
    const { offered } = await chat(pat, 'hello');
    expect(offered.sort()).toEqual(['portal_get_case', 'portal_list_cases', 'portal_list_contacts', 'portal_list_sessions', 'portal_open_case', 'search_documents']);
  });

  it('a tool the assistant was not offered is refused when it runs, and the refusal is audited under the person', async () => {
    const { reply } = await chat(pat, 'call crm_list_leads {}');
    expect(reply).toContain('not available');
    const { reply: ack } = await chat(pat, 'call sre_list_alerts {}');
    expect(ack).toContain('not available');
    const audit = await (await api.request('/api/v1/tools/calls?tool=crm_list_leads')).json();
    expect(audit.items[0]).toMatchObject({ caller_kind: 'agent', user_id: patId, outcome: 'forbidden' });
  });

  it("the portal tools read only the person's own rows", async () => {
    await pat.request('/api/portal/contacts', { method: 'POST', json: { name: 'Pat Friend' } });
    await sam.request('/api/portal/contacts', { method: 'POST', json: { name: 'Sam Secret' } });
    const { reply } = await chat(pat, 'call portal_list_contacts {}');
    expect(reply).toContain('Pat Friend');
    expect(reply).not.toContain('Sam Secret');
  });

  it("an SRE's assistant is offered the CRM, SRE and delegation tools", async () => {
    const { offered } = await chat(sam, 'hello');
    expect(offered).toEqual(expect.arrayContaining(['crm_list_leads', 'sre_acknowledge_incident', 'sre_execute_runbook', 'agent_delegate', 'search_documents']));
  });

  it("delegation never targets another person's session", async () => {
    const { reply } = await chat(sam, `call agent_delegate ${JSON.stringify({ task: 'read their chat', user_id: patId, wait_seconds: 0 })}`);
    expect(reply).toContain('only in your own session');
    // Nothing was posted into Pat's conversation.
    const mine = await (await pat.request('/api/portal/chat')).json();
    expect(mine.messages.map((m: { content: string }) => m.content)).not.toContain('read their chat');
  });

  it('a signed-in person calling the gateway is audited under their own id, not as an API key', async () => {
    const res = await sam.request('/api/v1/tools/crm_list_leads/execute', { method: 'POST', json: {} });
    expect(res.status, await res.clone().text()).toBe(200);
    const audit = await (await api.request('/api/v1/tools/calls?tool=crm_list_leads&outcome=ok')).json();
    expect(audit.items[0]).toMatchObject({ caller_kind: 'person', caller_id: `user:${samId}`, user_id: samId });
  });
});
