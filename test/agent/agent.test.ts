import { afterAll, describe, expect, it } from 'vitest';
import { z } from '../../shared/zod.js';
import { registerTools, defineTool } from '../../shared/tools.js';
import { runAgent, type AgentEventType } from '../../shared/agent/agent.js';
import { useLocalLlm, startLocalLlm, type ChatRequest } from '../helpers/local-llm-server.js';
import { userWithRoles } from '../helpers/people.js';

// A model that calls tools until it sees their results, then answers from them.
const llm = await useLocalLlm((req: ChatRequest) => {
  const toolMessages = req.body.messages.filter((m) => m.role === 'tool');
  if (toolMessages.length === 0) {
    return {
      tool_calls: [
        { id: 'call_ok', name: 'test_weather', arguments: JSON.stringify({ city: 'Oslo' }) },
        { id: 'call_bad', name: 'test_weather', arguments: JSON.stringify({ city: 42 }) },
        { id: 'call_throws', name: 'test_weather', arguments: JSON.stringify({ city: 'Atlantis' }) },
        { id: 'call_unknown', name: 'no_such_tool', arguments: '{}' },
      ],
    };
  }
  const ok = toolMessages.find((m) => m.tool_call_id === 'call_ok');
  return { content: `Weather: ${JSON.parse(ok!.content!).summary}` };
});
process.env.LLM_API_KEY = 'sk-test-agent';
process.env.LLM_MODEL = 'test-model';

registerTools([
  defineTool({
    name: 'test_weather',
    description: 'Current weather of a city',
    executor: 'test',
    changesData: false,
    input: z.object({ city: z.string().min(1) }),
    handler: async ({ city }) => {
      if (city === 'Atlantis') throw new Error('city is under water');
      return { city, summary: `5°C and clear in ${city}` };
    },
  }),
]);

describe('agent tool loop over the openai client', () => {
  it('runs tool calls, returns tool errors to the model as results, and answers from the results', async () => {
    const events: Array<{ type: AgentEventType; data: Record<string, unknown> }> = [];
    const result = await runAgent(
      {
        channel: 'chat',
        history: [
          { role: 'user', content: 'hi', channel: 'chat' },
          { role: 'assistant', content: 'hello', channel: 'chat' },
          { role: 'user', content: 'I am driving to Oslo', channel: 'voice' },
        ],
        message: 'What is the weather there?',
        // The agent serves an operator, who may use the test tool (undeclared access: role sre).
        caller: { kind: 'agent', id: 'test-session', user_id: (await userWithRoles(['sre'])).user_id },
      },
      async (type, data) => void events.push({ type, data }),
    );

    expect(result.reply).toBe('Weather: 5°C and clear in Oslo');
    expect(result.model).toBe('test-model');

    // The first request: our key and model, the tool from the registry as a function tool, the history as context.
    const [first, second] = llm.requests;
    expect(llm.requests).toHaveLength(2);
    expect(first!.headers.authorization).toBe('Bearer sk-test-agent');
    expect(first!.body.model).toBe('test-model');
    const tool = first!.body.tools!.find((t) => t.function.name === 'test_weather');
    expect(tool).toMatchObject({ type: 'function', function: { description: 'Current weather of a city', parameters: { type: 'object', required: ['city'] } } });
    expect(first!.body.messages.slice(1).map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello'],
      ['user', '[Real-time update from voice] user: I am driving to Oslo'],
      ['user', 'What is the weather there?'],
    ]);

    // The second request carries the assistant's tool calls and one tool result per call.
    const results = Object.fromEntries(second!.body.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, JSON.parse(m.content!)]));
    expect(results.call_ok).toEqual({ city: 'Oslo', summary: '5°C and clear in Oslo' });
    expect(results.call_bad.error).toMatch(/Invalid input for tool test_weather/);
    expect(results.call_bad.fields).toEqual([expect.objectContaining({ path: 'input.city' })]);
    expect(results.call_throws).toEqual({ error: 'city is under water' });
    expect(results.call_unknown).toEqual({ error: 'unknown tool "no_such_tool"' });
    expect(second!.body.messages.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls).toHaveLength(4);

    // Events: TYPING around the work, TOOL_CALL then TOOL_RESULT for each call.
    expect(events.map((e) => e.type)).toEqual(['TYPING', 'TOOL_CALL', 'TOOL_RESULT', 'TOOL_CALL', 'TOOL_RESULT', 'TOOL_CALL', 'TOOL_RESULT', 'TOOL_CALL', 'TOOL_RESULT', 'TYPING']);
    expect(events[0]!.data).toEqual({ is_typing: true });
    expect(events.at(-1)!.data).toEqual({ is_typing: false });
    expect(events[1]!.data).toEqual({ tool_name: 'test_weather', arguments: { city: 'Oslo' } });
    expect(events[2]!.data).toEqual({ tool_name: 'test_weather', result: { city: 'Oslo', summary: '5°C and clear in Oslo' } });
    expect(result.tool_calls.map((c) => c.ok)).toEqual([true, false, false, false]);
  });

  it('a model failure is an error of the turn (the job retries), and TYPING still ends', async () => {
    const events: string[] = [];
    // An endpoint that no longer answers (the client is configured once, so it is pointed there for this test).
    const broken = await startLocalLlm(() => ({ content: 'never' }));
    await broken.close();
    const { default: OpenAI } = await import('openai');
    const { llmClient } = await import('../../shared/clients/llm.js');
    const client = llmClient() as InstanceType<typeof OpenAI>;
    const original = client.baseURL;
    client.baseURL = broken.baseUrl;
    const retries = client.maxRetries;
    client.maxRetries = 0;
    try {
      await expect(runAgent({ channel: 'chat', history: [], message: 'hi' }, async (t, d) => void events.push(`${t}:${JSON.stringify(d)}`))).rejects.toThrow(/Connection error/);
    } finally {
      client.baseURL = original;
      client.maxRetries = retries;
    }
    expect(events).toEqual(['TYPING:{"is_typing":true}', 'TYPING:{"is_typing":false}']);
  });
});
