/**
 * Agent delegation end to end: an assistant hands a task to the platform's agent through the tool
 * gateway; the agent (the real openai client against a local OpenAI-format server) works it with a
 * tool in a BullMQ job, its TOOL_CALL / TOOL_RESULT events and answer reach an SSE subscriber of the
 * session, and the run's answer is read back by handle. A retried run replays recorded tool results.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from '../../shared/zod.js';
import { defineTool, inputDigest, registerTools } from '../../shared/tools.js';
import { useLocalLlm, type ChatRequest } from '../helpers/local-llm-server.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribe } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';

// A model that calls the side-effect tool with the task once, then answers from its result.
const llm = await useLocalLlm((req: ChatRequest) => {
  const task = [...req.body.messages].reverse().find((m) => m.role === 'user')!.content!;
  const tool = req.body.messages.find((m) => m.role === 'tool');
  if (!tool) return { tool_calls: [{ id: 'call_1', name: 'test_side_effect', arguments: JSON.stringify({ note: task }) }] };
  return { content: `Done (${JSON.parse(tool.content!).count}): ${task}` };
});
process.env.LLM_MODEL = 'test-model';

let sideEffects = 0;
registerTools([
  defineTool({
    name: 'test_side_effect',
    description: 'records a note (a side effect that must not happen twice)',
    executor: 'test',
    changesData: false,
    input: z.object({ note: z.string() }),
    handler: async () => ({ count: ++sideEffects }),
  }),
]);

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

async function tool(name: string, input: unknown) {
  const res = await api.request(`/api/v1/tools/${name}/execute`, { method: 'POST', json: input });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).result;
}

describe('agent delegation', () => {
  it('a long run returns a handle; its tool events and answer appear on the session stream; the status tool reports the answer', async () => {
    const user = await (await api.request('/api/users', { method: 'POST', json: { phone_number: '+14155550101', display_name: 'Dee' } })).json();
    const { resolveSession } = await import('../../shared/sessions/resolve.js');
    const { session } = await resolveSession(user.user_id);
    const sse = await subscribe(api.url, session.session_id, 'voice');
    try {
      const started = await tool('agent_delegate', { task: 'note the outage', user_id: user.user_id, wait_seconds: 0 });
      expect(started).toMatchObject({ session_id: session.session_id, user_id: user.user_id, answer: null });
      expect(['queued', 'running']).toContain(started.status);

      const call = await sse.next((e) => e.event_type === 'TOOL_CALL');
      expect(call).toMatchObject({ channel: 'chat', data: { tool_name: 'test_side_effect', arguments: { note: 'note the outage' } } });
      expect(await sse.next((e) => e.event_type === 'TOOL_RESULT')).toMatchObject({ data: { tool_name: 'test_side_effect', result: { count: 1 } } });
      expect((await sse.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant')).data.content).toBe('Done (1): note the outage');

      const status = await eventually(async () => {
        const s = await tool('agent_delegation_status', { run_id: started.run_id });
        return s.status === 'completed' ? s : null;
      }, 10_000, 'the delegated run to complete');
      expect(status).toMatchObject({ status: 'completed', answer: 'Done (1): note the outage', tool_calls: [{ tool_name: 'test_side_effect', ok: true }] });
    } finally {
      sse.close();
    }
    // The delegated agent was offered the platform's tools but not the delegation tools (no loops).
    const offered = llm.requests[0]!.body.tools!.map((t) => t.function.name);
    expect(offered).toContain('test_side_effect');
    expect(offered).toContain('sre_get_incident');
    expect(offered).not.toContain('agent_delegate');
    // The agent's tool call went through the gateway audit, as the session.
    const audit = await (await api.request('/api/v1/tools/calls?tool=test_side_effect')).json();
    expect(audit.items[0]).toMatchObject({ caller_kind: 'agent', caller_id: session.session_id, outcome: 'ok' });
  });

  it('a short run answers at once, as the service user created on demand', async () => {
    const done = await tool('agent_delegate', { task: 'quick one', wait_seconds: 10 });
    expect(done).toMatchObject({ status: 'completed', answer: 'Done (2): quick one' });
    const { getUser } = await import('../../shared/users/users.store.js');
    expect((await getUser(done.user_id)).phone_number).toBe('+19990000000');
    expect((await api.request('/api/v1/tools/agent_delegation_status/execute', { method: 'POST', json: { run_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
  });

  it('a retried run does not call again a tool whose result was recorded', async () => {
    const { insertRun, recordToolResult, getRun } = await import('../../shared/agent/delegation-runs.store.js');
    const { runDelegation } = await import('../../shared/agent/delegation.js');
    const first = await getRun((await tool('agent_delegate', { task: 'first', wait_seconds: 10 })).run_id);
    const before = sideEffects;
    // A run whose first attempt already called the tool (as the model will ask again) and then failed.
    const run = await insertRun({ user_id: first.user_id, session_id: first.session_id, interaction_id: first.interaction_id, task: 'retry me', requested_by: 'test', authority: first.authority });
    await recordToolResult(run.id, `test_side_effect:${inputDigest({ note: 'retry me' })}:1`, { tool_name: 'test_side_effect', arguments: { note: 'retry me' }, ok: true, result: { count: 99 } });
    expect(await runDelegation(run.id, false)).toEqual({ status: 'completed' });
    expect(sideEffects).toBe(before);
    expect(await getRun(run.id)).toMatchObject({ status: 'completed', answer: 'Done (99): retry me' });
    // A second delivery of the finished job changes nothing.
    expect(await runDelegation(run.id, false)).toEqual({ status: 'completed' });
    expect(sideEffects).toBe(before);
  });
});
