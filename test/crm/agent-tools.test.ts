import { afterAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../shared/agent/agent.js';
import { db } from '../../shared/db/index.js';
import { useLocalLlm, type ChatRequest } from '../helpers/local-llm-server.js';
import { userWithRoles } from '../helpers/people.js';
import { loadToolCatalog } from '../../shared/tool-catalog.js';

// What the worker's main.ts does at start-up: this file runs the agent without starting the platform.
loadToolCatalog();

// A model that creates a lead with the CRM tool, then answers with the id it got back.
const llm = await useLocalLlm((req: ChatRequest) => {
  const result = req.body.messages.find((m) => m.role === 'tool');
  if (!result) {
    return { tool_calls: [{ id: 'call_lead', name: 'crm_create_lead', arguments: JSON.stringify({ first_name: 'Agent', last_name: 'Made', company: 'Chat Co', source: 'conversation' }) }] };
  }
  return { content: `Created lead ${JSON.parse(result.content!).id}` };
});
process.env.LLM_API_KEY = 'sk-test-crm';

describe('the agent uses the CRM tools from the one registry', () => {
  it('offers the crm_* tools to the assistant of a person with the CRM role and runs the one it calls against the CRM', async () => {
    const sre = await userWithRoles(['sre']);
    const caller = { kind: 'agent' as const, id: 'test-session', user_id: sre.user_id };
    const reply = await runAgent({ channel: 'chat', history: [], message: 'Please record me as a lead: Agent Made from Chat Co', caller }, async () => undefined);
    const offered = llm.requests[0]!.body.tools!.map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['crm_create_lead', 'crm_convert_lead', 'crm_get_pipeline_summary']));
    const lead = await db()('crm_leads').where({ last_name: 'Made' }).first();
    expect(lead).toMatchObject({ first_name: 'Agent', company: 'Chat Co', source: 'conversation', status: 'new' });
    expect(reply.reply).toBe(`Created lead ${lead.id}`);
    expect(reply.tool_calls).toEqual([expect.objectContaining({ tool_name: 'crm_create_lead', ok: true })]);
  });
});
