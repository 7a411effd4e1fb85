/** The tool gateway (list and execute the registry's agent tools) and the MCP endpoint over Streamable HTTP. */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiRouter } from '../routing.js';
import { z } from '../../shared/zod.js';
import { NotFoundError } from '../../shared/errors.js';
import { loadToolCatalog } from '../../shared/tool-catalog.js';
import { executeTool, getTool, listTools, toolJsonSchema } from '../../shared/tools.js';
import { createMcpServer } from '../../shared/mcp-server.js';

const toolListing = z
  .object({
    tools: z.array(z.object({ name: z.string(), description: z.string(), executor: z.string(), input_schema: z.record(z.string(), z.unknown()) })),
  })
  .openapi('ToolList');

export function toolRoutes(): ApiRouter {
  loadToolCatalog();
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/tools',
      tags: ['tools'],
      summary: 'List agent tools with their input JSON Schemas',
      description: 'Every tool of the platform\'s tool registry (the same definitions the agent and the MCP servers use). `executor` filters by executor type, e.g. `crm`.',
      auth: 'apiKey',
      request: { query: z.object({ executor: z.string().optional() }) },
      responses: { 200: { description: 'The tools', schema: toolListing } },
      handler: ({ query }) => ({
        tools: listTools(query.executor).map((t) => ({ name: t.name, description: t.description, executor: t.executor, input_schema: toolJsonSchema(t) })),
      }),
    })
    .route({
      method: 'post',
      path: '/api/v1/tools/{name}/execute',
      tags: ['tools'],
      summary: 'Execute an agent tool',
      description: [
        'The body is the tool\'s input object (see its `input_schema`). The answer is `{tool, executor, result}`.',
        'Bad input is a 400 whose `errors` name each field as `input.<field>`; an unknown tool is a 404; the tool\'s own',
        'errors keep their status (404 unknown id, 409 invalid state move, 400 invalid reference such as a stage outside the pipeline).',
        'Credentials: the gateway calls the backend in-process, so the caller\'s API key is the only credential needed.',
      ].join('\n'),
      auth: 'apiKey',
      request: { params: z.object({ name: z.string().max(100) }), body: z.record(z.string(), z.unknown()).openapi({ description: 'The tool input' }) },
      responses: { 200: { description: 'The tool ran', schema: z.object({ tool: z.string(), executor: z.string(), result: z.unknown() }) } },
      errors: { 409: 'The tool refused an invalid state move (e.g. a lead transition); the body names the allowed next states' },
      handler: async ({ params, body }) => {
        const tool = getTool(params.name);
        if (!tool) throw new NotFoundError(`No tool ${params.name}.`);
        return { tool: tool.name, executor: tool.executor, result: (await executeTool(tool, body)) ?? null };
      },
    })
    .route({
      method: 'post',
      path: '/mcp',
      tags: ['tools'],
      summary: 'MCP server (Streamable HTTP) exposing every agent tool',
      description: [
        'Model Context Protocol over Streamable HTTP, stateless: each POST carries JSON-RPC message(s) and is answered with JSON',
        '(`Accept: application/json, text/event-stream` as MCP clients send). No session id is issued; GET and DELETE are not offered (405).',
        'Tool failures are results with `isError: true` whose text names the bad fields.',
      ].join('\n'),
      auth: 'apiKey',
      request: { body: z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]).openapi({ description: 'JSON-RPC 2.0 message or batch' }) },
      responses: { 200: { description: 'JSON-RPC response(s)' } },
      handler: async ({ body }, ctx) => {
        const server = createMcpServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        ctx.res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        ctx.respond = false;
        await transport.handleRequest(ctx.req, ctx.res, body);
        return undefined;
      },
    });
}
