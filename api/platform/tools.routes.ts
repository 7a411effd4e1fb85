/** The tool gateway (list and execute the registry's agent tools) and the MCP endpoint over Streamable HTTP. */
import { ApiRouter } from '../routing.js';
import { toolJsonSchema, type ToolCaller } from '../../shared/tools.js';
import { callToolByName, toolsFor } from '../../shared/tool-gateway/gateway.js';
import { listToolCalls } from '../../shared/tool-gateway/tool-calls.store.js';
import type { Context } from 'koa';
import type { Authority } from '../../shared/auth/scopes.js';
import { UnauthorizedError } from '../../shared/errors.js';
import { personOf } from '../auth/browser-session.js';
import { portalCaller } from '../portal/caller.js';
import { mcpBody, toolCallPage, toolCallQuery, toolExecution, toolInput, toolListing, toolListQuery, toolParams } from './tools.schemas.js';

/** The gateway's caller: the key the request presented (with its scopes), or the signed-in person (with their roles). */
async function callerOf(ctx: Context): Promise<ToolCaller> {
  const authority = ctx.state.authority as Authority | undefined;
  if (authority?.kind === 'key') return { kind: 'api_key', id: authority.key_id, authority };
  if (!personOf(ctx)) throw new UnauthorizedError('Sign in, or send an API key.');
  const { userId } = await portalCaller(ctx);
  return { kind: 'person', id: `user:${userId}`, user_id: userId, authority: { kind: 'person', user_id: userId, roles: personOf(ctx)!.roles } };
}

export function toolRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/tools',
      tags: ['tools'],
      summary: 'List agent tools with their input JSON Schemas',
      description: [
        'The tools of the platform\'s tool registry (the same definitions the agent and the MCP servers use) that the caller may use: a key needs the scope `tools` and the scope of the tool\'s domain (crm_* `crm`; sre_* and workflow_* `sre`; agent_* `sessions`); a signed-in person the role (crm_*, sre_*, workflow_*, agent_*: `sre`). The same check runs again when a tool is executed. `executor` filters by executor type:',
        '`crm`, `sre`, `agent` (agent delegation) and `workflow` (active automation workflows tagged WORKFLOW_TOOL_TAG, refreshed every WORKFLOW_TOOLS_TTL seconds).',
      ].join(' '),
      auth: 'key-or-sre',
      request: { query: toolListQuery },
      responses: { 200: { description: 'The tools', schema: toolListing } },
      handler: async ({ query }, ctx) => ({
        tools: (await toolsFor(await callerOf(ctx), query.executor)).map((t) => ({ name: t.name, description: t.description, executor: t.executor, input_schema: toolJsonSchema(t) })),
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
        'Credentials: the gateway calls the backend in-process, so the caller\'s API key is the only credential needed; it must hold the scopes `tools` and the tool\'s domain scope (a person: the role), checked at this call (403 `forbidden`, audited as such).',
        'Each call is limited to TOOL_CALL_TIMEOUT_MS (over it: 504, the tool may still finish in the background) and its result to',
        'TOOL_RESULT_MAX_BYTES of JSON (over it: 502 `tool-result-too-large`), and is audited (see GET /api/v1/tools/calls).',
      ].join('\n'),
      auth: 'key-or-sre',
      request: { params: toolParams, body: toolInput },
      responses: { 200: { description: 'The tool ran', schema: toolExecution } },
      errors: {
        403: 'The caller may not use this tool (its key lacks the scope, the person the role)',
        409: 'The tool refused an invalid state move (e.g. a lead transition); the body names the allowed next states',
        502: 'The tool\'s backend failed, or its result exceeded TOOL_RESULT_MAX_BYTES (`result_bytes`, `limit_bytes`)',
        504: 'The tool did not finish within TOOL_CALL_TIMEOUT_MS',
      },
      handler: async ({ params, body }, ctx) => {
        const { tool, result } = await callToolByName(params.name, body, await callerOf(ctx));
        return { tool: tool.name, executor: tool.executor, result: result ?? null };
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/tools/calls',
      tags: ['tools'],
      summary: 'The audit of tool-gateway calls, newest first',
      description: 'One row per call through the gateway routes, /mcp and the agent: who, tool, executor, outcome, duration. Inputs are kept only as a SHA-256 digest.',
      auth: 'key-or-sre',
      request: { query: toolCallQuery },
      responses: { 200: { description: 'A page of calls', schema: toolCallPage } },
      handler: ({ query }) => listToolCalls(query),
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
      auth: 'key-or-sre',
      request: { body: mcpBody },
      responses: { 200: { description: 'JSON-RPC response(s)' } },
      handler: async ({ body }, ctx) => {
        // The MCP SDK (and what it pulls in: ajv, hono, its zod schemas) is loaded on the first MCP call: ~7 MB of heap an API process otherwise holds for nothing.
        const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await Promise.all([import('../../shared/mcp-server.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]);
        const server = createMcpServer(undefined, await callerOf(ctx));
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
