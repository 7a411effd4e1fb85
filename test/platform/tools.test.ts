import { describe, expect, it } from 'vitest';
import { z } from '../../shared/zod.js';
import { defineTool, executeTool, toolJsonSchema, ToolInputError } from '../../shared/tools.js';

const echo = defineTool({
  name: 'test_echo',
  description: 'echoes',
  executor: 'test',
  changesData: false,
  input: z.object({ text: z.string().min(1), times: z.number().int().positive().default(1) }),
  handler: async ({ text, times }) => text.repeat(times),
});

describe('tool registry', () => {
  it('runs a tool with its parsed input', async () => {
    expect(await executeTool(echo, { text: 'ab', times: 2 })).toBe('abab');
  });

  it('bad tool input is a tool error naming the field', async () => {
    const error = (await executeTool(echo, { times: 0 }).catch((e: unknown) => e)) as ToolInputError;
    expect(error).toBeInstanceOf(ToolInputError);
    expect(error.errors.map((e: { path: string }) => e.path).sort()).toEqual(['input.text', 'input.times']);
  });

  it('describes the input as JSON Schema', () => {
    expect(toolJsonSchema(echo)).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  });
});
