import { describe, expect, it } from 'vitest';
import { NO_MODEL_REPLY, runAgent } from '../../shared/agent/agent.js';

process.env.LLM_PROVIDER = 'none';

describe('agent without a model', () => {
  it('LLM_PROVIDER=none answers a fixed text saying no model is configured, and still emits TYPING', async () => {
    const events: unknown[] = [];
    const result = await runAgent({ channel: 'chatapp', history: [], message: 'hello' }, async (type, data) => void events.push([type, data]));
    expect(result).toEqual({ reply: NO_MODEL_REPLY, tool_calls: [], model: null });
    expect(result.reply).toMatch(/no language model is configured/i);
    expect(events).toEqual([['TYPING', { is_typing: true }], ['TYPING', { is_typing: false }]]);
  });
});
