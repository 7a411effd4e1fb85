/**
 * The portal's views of other services (spec 002 § Queries the portal makes): conversation history
 * from the agent API and workflow executions from the automation API. The connection state is part
 * of each answer, so the screens can show the error instead of failing.
 */
import { ApiRouter } from '../routing.js';
import { NotFoundError } from '../../shared/errors.js';
import { ExternalHttpError } from '../../shared/clients/http.js';
import { agentApi } from '../../shared/clients/agent-api.js';
import { automation, type N8nExecution } from '../../shared/clients/n8n.js';
import { config } from '../../shared/config.js';
import { actingUserNote, portalCaller } from './caller.js';
import { userHeader } from './common.schemas.js';
import { automationList, historyConversation, historyList, historyParams } from './remote.schemas.js';

const portalRows = 50;
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function portalRemoteRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/portal/history',
      tags: ['portal: history'],
      summary: 'My conversations',
      description: `Calls GET {AGENT_API_URL}/sessions?user_id=<me>&limit=${portalRows} with X-API-Key (AGENT_API_URL defaults to this platform). When it fails, GET {AGENT_API_URL}/api/health is tried and \`connection\` says whether the agent API is reachable, with the error; \`sessions\` is then empty. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader },
      responses: { 200: { description: 'Sessions, newest first, and the connection state', schema: historyList } },
      handler: async (_i, ctx) => {
        const caller = await portalCaller(ctx);
        const client = agentApi();
        try {
          const rows = await client.listSessions(caller.userId, portalRows);
          return {
            connection: { state: 'connected' as const, error: null },
            sessions: rows.map((r) => ({ session_id: r.session_id, channel: r.channel, created_at: r.created_at, message_count: r.message_count, summary: r.summary, status: r.status })),
          };
        } catch (err) {
          // A user the agent API does not know has no history yet; anything else is a connection problem.
          if (err instanceof ExternalHttpError && err.status === 404) return { connection: { state: 'connected' as const, error: null }, sessions: [] };
          const health = await client.health().then(() => null, (e: unknown) => errorText(e));
          return { connection: { state: 'failed' as const, error: health ?? errorText(err) }, sessions: [] };
        }
      },
    })
    .route({
      method: 'get',
      path: '/api/portal/history/{session_id}',
      tags: ['portal: history'],
      summary: 'One of my conversations with its messages',
      description: `Calls GET {AGENT_API_URL}/sessions/{session_id} with X-API-Key; a session of another user answers 404. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: historyParams },
      responses: { 200: { description: 'The conversation', schema: historyConversation } },
      errors: { 502: 'The agent API could not be reached or failed' },
      handler: async ({ params }, ctx) => {
        const caller = await portalCaller(ctx);
        let s;
        try {
          s = await agentApi().getSession(params.session_id);
        } catch (err) {
          if (err instanceof ExternalHttpError && err.status === 404) throw new NotFoundError(`No conversation ${params.session_id}.`);
          throw err;
        }
        if (s.user_id !== caller.userId) throw new NotFoundError(`No conversation ${params.session_id}.`);
        return { session_id: s.session_id, channel: s.channel, created_at: s.created_at, message_count: s.message_count, summary: s.summary, status: s.status, messages: s.messages };
      },
    })
    .route({
      method: 'get',
      path: '/api/portal/automations',
      tags: ['portal: automations'],
      summary: 'Recent workflow executions',
      description: `Calls GET {AUTOMATION_URL}/api/v1/workflows (the connectivity test; it also names the workflows) and GET {AUTOMATION_URL}/api/v1/executions?limit=${portalRows}, with x-automation-api-key and X-N8N-API-KEY. Status: n8n's success → success; running, new and waiting → running; error, crashed, canceled and unknown → failed. When a call fails, \`connection\` is failed with the error and \`executions\` empty; without AUTOMATION_URL it is not_configured.`,
      auth: 'key-or-person',
      responses: { 200: { description: 'Executions, newest first, and the connection state', schema: automationList } },
      handler: async () => {
        if (!config().sre.automation.url) return { connection: { state: 'not_configured' as const, error: 'AUTOMATION_URL is not set' }, executions: [] };
        const client = automation();
        try {
          const { data: workflows } = await client.listWorkflows({ limit: 250 });
          const names = new Map(workflows.map((w) => [String(w.id), w.name]));
          const executions = await client.listExecutions(portalRows);
          return {
            connection: { state: 'connected' as const, error: null },
            executions: executions.map((e) => ({
              id: String(e.id),
              workflowName: names.get(String(e.workflowId)) ?? `workflow ${e.workflowId ?? '?'}`,
              status: executionStatus(e),
              startedAt: e.startedAt ?? null,
              stoppedAt: e.stoppedAt ?? null,
            })),
          };
        } catch (err) {
          return { connection: { state: 'failed' as const, error: errorText(err) }, executions: [] };
        }
      },
    });
}

function executionStatus(e: N8nExecution): 'success' | 'failed' | 'running' {
  if (e.status === 'success') return 'success';
  if (e.status === 'running' || e.status === 'new' || e.status === 'waiting') return 'running';
  if (e.status === undefined) return e.finished ? 'success' : e.stoppedAt ? 'failed' : 'running';
  return 'failed';
}
