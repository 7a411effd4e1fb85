/** Request and response schemas of the tool gateway routes and /mcp. */
import { z, uuid } from '../../shared/zod.js';
import { toolCallOutcomes } from '../../shared/tool-gateway/tool-calls.store.js';
import { offsetPageQuery, offsetPageSchema } from '../../shared/sre/listing.js';

export const toolListing = z
  .object({
    tools: z.array(z.object({ name: z.string(), description: z.string(), executor: z.string(), input_schema: z.record(z.string(), z.unknown()) })),
  })
  .openapi('ToolList');
export const toolListQuery = z.object({ executor: z.string().optional() });
export const toolParams = z.object({ name: z.string().max(100) });
/** Any object: the tool checks it against its own input schema. */
export const toolInput = z.record(z.string(), z.unknown()).openapi({ description: 'The tool input' });
export const toolExecution = z.object({ tool: z.string(), executor: z.string(), result: z.unknown() });

const toolCall = z
  .object({
    id: z.uuid(),
    tool: z.string(),
    executor: z.string(),
    caller_kind: z.enum(['api_key', 'agent', 'stdio', 'person']),
    caller_id: z.string().describe('API key id (`key:<name>` for a named key, `key:` + 16 hex digits of its SHA-256 for a key of API_KEYS), `user:<user_id>` for a signed-in person, the agent\'s session id, or `stdio`'),
    user_id: z.string().nullable().describe('the person the call acted for: the signed-in person, or the user whose assistant called'),
    outcome: z.enum(toolCallOutcomes),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
    input_sha256: z.string().describe('SHA-256 of the input JSON (keys sorted); the input itself is not stored'),
    result_bytes: z.number().int().nullable(),
    created_at: z.date().openapi({ type: 'string', format: 'date-time' }),
  })
  .openapi('ToolCall');
export const toolCallPage = offsetPageSchema(toolCall, 'ToolCallPage');
export const toolCallQuery = z.object({
  tool: z.string().max(200).optional(),
  executor: z.string().max(100).optional(),
  outcome: z.enum(toolCallOutcomes).optional(),
  caller_id: z.string().max(200).optional(),
  user_id: uuid().optional(),
  ...offsetPageQuery,
});
/** JSON-RPC is read by the MCP transport itself. */
export const mcpBody = z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]).openapi({ description: 'JSON-RPC 2.0 message or batch' });
