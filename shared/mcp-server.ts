/**
 * An MCP server (official @modelcontextprotocol/sdk) exposing every tool of the registry. The
 * low-level Server is used on purpose: tools are already declared once, with their JSON Schemas
 * (toolJsonSchema) and validation (executeTool), so the server only lists and dispatches them.
 * Tool failures (bad input naming the field, unknown ids, invalid moves) are tool results with
 * isError, as MCP expects, so the model can read and correct them.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from './errors.js';
import { availableTools, executeTool, findTool, toolJsonSchema, type ToolCaller } from './tools.js';
import { callTool, toolsFor } from './tool-gateway/gateway.js';

/**
 * A new MCP server over the registry (optionally only one executor type's tools). With a `caller`,
 * every call goes through the tool gateway (time and size limits, audit in Postgres) on its behalf;
 * without one (the issue-tracker server, which bounds its own calls), tools run directly.
 */
export function createMcpServer(executor?: string, caller?: ToolCaller): Server {
  const server = new Server({ name: executor ? `switchboard-${executor}` : 'switchboard', version: '1.0.0' }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    // With a caller, only the tools it may use (the gateway checks again at each call).
    tools: (caller ? await toolsFor(caller, executor) : await availableTools(executor)).map((t) => ({ name: t.name, description: t.description, inputSchema: toolJsonSchema(t) as { type: 'object' } })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = await findTool(request.params.name);
    if (!tool || (executor && tool.executor !== executor)) {
      return { isError: true, content: [{ type: 'text', text: `Unknown tool ${request.params.name}.` }] };
    }
    try {
      const args = request.params.arguments ?? {};
      const result = caller ? await callTool(tool, args, caller) : await executeTool(tool, args);
      return { content: [{ type: 'text', text: JSON.stringify(result ?? null) }] };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: err.message, errors: err.errors, ...err.extensions }) }] };
    }
  });
  return server;
}
