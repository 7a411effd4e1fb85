import { describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { useLocalLlm, type ChatRequest } from '../helpers/local-llm-server.js';
import { userWithRoles } from '../helpers/people.js';
import { loadToolCatalog } from '../../shared/tool-catalog.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { openInteraction, runTurn } from '../../shared/channels/turn.js';

// What the worker's main.ts does at start-up: this file runs the agent without starting the platform.
loadToolCatalog();

// A model that creates a lead with the CRM tool, then says it waits for the person's yes.
const llm = await useLocalLlm((req: ChatRequest) => {
  const result = req.body.messages.find((m) => m.role === 'tool');
  if (!result) {
    return { tool_calls: [{ id: 'call_lead', name: 'crm_create_lead', arguments: JSON.stringify({ first_name: 'Agent', last_name: 'Made', company: 'Chat Co', source: 'conversation' }) }] };
  }
  return { content: `The lead waits for your yes (${JSON.parse(result.content!).status}).` };
});
process.env.LLM_API_KEY = 'sk-test-crm';

describe('the agent uses the CRM tools from the one registry', () => {
  it('offers the crm_* tools to the assistant of a person with the CRM role and runs the one it calls against the CRM on their yes', async () => {
    const sre = await userWithRoles(['sre']);
    const { session } = await resolveSession(sre.user_id);
    const interaction_id = await openInteraction(session.session_id, 'chat');
    const turn = (message: string) => runTurn({ channel: 'chat', session_id: session.session_id, interaction_id, user_id: sre.user_id, message, finalAttempt: true, fromPerson: true });
    const asked = await turn('Please record me as a lead: Agent Made from Chat Co');
    const offered = llm.requests[0]!.body.tools!.map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['crm_create_lead', 'crm_convert_lead', 'crm_get_pipeline_summary']));
    // crm_create_lead changes data: it waits for the person's yes (issue 39 point 8).
    expect(asked.reply).toContain('The lead waits for your yes (awaiting_confirmation).');
    expect(await db()('crm_leads').where({ last_name: 'Made', company: 'Chat Co' }).first()).toBeUndefined();
    const reply = await turn('yes');
    const lead = await db()('crm_leads').where({ last_name: 'Made' }).first();
    expect(lead).toMatchObject({ first_name: 'Agent', company: 'Chat Co', source: 'conversation', status: 'new' });
    expect(reply.reply).toContain(`"id":"${lead.id}"`);
    expect(reply.tool_calls).toEqual([expect.objectContaining({ tool_name: 'crm_create_lead', ok: true })]);
  });
});
