/** /api/v1/runbooks: remediation workflows (n8n) bound to alert matchers, and their executions. */
import { ApiRouter } from '../../routing.js';
import { assertMatchersCompile } from '../../../shared/sre/automation/matchers.js';
import { createRunbook, deleteRunbook, getRunbook, listRunbooks, updateRunbook } from '../../../shared/sre/runbooks/runbook.store.js';
import { executionHistory, getExecution, listExecutions } from '../../../shared/sre/runbooks/execution.store.js';
import { assertWorkflowTarget, executeRunbook } from '../../../shared/sre/runbooks/runbooks.js';
import * as s from './runbooks.schemas.js';
import { idParams } from '../common.schemas.js';
import { actorOf } from '../../auth/browser-session.js';

const tags = ['runbooks'];
const workflow = `**Targets.** \`webhook_url\` is a path on the automation system (\`/webhook/restart-service\`, resolved under AUTOMATION_URL) or an absolute URL under AUTOMATION_URL (same origin, below its path); anything else is a 400 naming \`body.webhook_url\`, and is checked again at each call (a runbook whose target is no longer under AUTOMATION_URL fails without a call). AUTOMATION_API_KEY is sent only there. The workflow's answer is stored as the execution's \`result\` up to 16 KiB; a larger one is stored as \`{truncated: true, bytes}\`. Error messages never carry the automation system's response body (it is logged).

A runbook starts its n8n workflow by POSTing JSON to the workflow's Webhook trigger URL (\`webhook_url\`) with headers \`x-automation-api-key\` and \`X-N8N-API-KEY\` (AUTOMATION_API_KEY). The body: execution_id, runbook {id, name, workflow_id}, trigger, triggered_by, parameters (runbook parameters merged with the execution input), alert {id, fingerprint, status, labels, annotations} or null, incident_id.
If the workflow answers with \`executionId\` (a "Respond to Webhook" node returning {{$execution.id}}), the execution stays running and a scheduled job follows it through GET {AUTOMATION_URL}/api/v1/executions/{id} (success → success; error, crashed, canceled → failed); otherwise a 2xx answer is success. 4xx → failed; 5xx or unreachable → retried, then failed. Running longer than timeout_seconds → timed_out.
Execution statuses: queued → running → success | failed | timed_out, each move in the execution's history (and on the incident's timeline when it has one).`;

export function runbookRoutes(): ApiRouter {
  const router = new ApiRouter();
  router
    .route({
      method: 'get',
      path: '/api/v1/runbooks/executions',
      tags,
      summary: 'List runbook executions',
      description: 'Newest first; `since`/`until` filter on created_at.',
      auth: 'key-or-sre',
      request: { query: s.executionQuery },
      responses: { 200: { description: 'a page of executions', schema: s.executionPage } },
      handler: ({ query }) => listExecutions(query),
    })
    .route({
      method: 'get',
      path: '/api/v1/runbooks/executions/{id}',
      tags,
      summary: 'Get a runbook execution with its status history',
      description: workflow,
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the execution', schema: s.executionDetail } },
      handler: async ({ params }) => ({ ...(await getExecution(params.id)), history: await executionHistory(params.id) }),
    })
    .route({
      method: 'get',
      path: '/api/v1/runbooks',
      tags,
      summary: 'List runbooks',
      description: '`search` matches the name; `since`/`until` filter on created_at.',
      auth: 'key-or-sre',
      request: { query: s.runbookQuery },
      responses: { 200: { description: 'a page of runbooks', schema: s.runbookPage } },
      handler: ({ query }) => listRunbooks(query),
    })
    .route({
      method: 'post',
      path: '/api/v1/runbooks',
      tags,
      summary: 'Create a runbook',
      description: `With \`auto_trigger\`, a runbook starts when an alert matching its matchers and severities fires: at most once per alert instance, never while the alert is flapping.\n\n${workflow}`,
      auth: 'key-or-sre',
      request: { body: s.runbookInput },
      responses: { 201: { description: 'created', schema: s.runbook } },
      errors: { 409: 'A runbook of that name exists' },
      handler: async ({ body }) => {
        assertWorkflowTarget(body.webhook_url);
        await assertMatchersCompile(body.matchers);
        return createRunbook(body);
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/runbooks/{id}',
      tags,
      summary: 'Get a runbook',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the runbook', schema: s.runbook } },
      handler: ({ params }) => getRunbook(params.id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/runbooks/{id}',
      tags,
      summary: 'Change a runbook',
      auth: 'key-or-sre',
      description: workflow,
      request: { params: idParams, body: s.runbookPatch },
      responses: { 200: { description: 'changed', schema: s.runbook } },
      errors: { 409: 'A runbook of that name exists' },
      handler: async ({ params, body }) => {
        if (body.webhook_url !== undefined) assertWorkflowTarget(body.webhook_url);
        if (body.matchers) await assertMatchersCompile(body.matchers);
        return updateRunbook(params.id, body);
      },
    })
    .route({
      method: 'delete',
      path: '/api/v1/runbooks/{id}',
      tags,
      summary: 'Delete a runbook and its executions',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'deleted' } },
      handler: async ({ params }, ctx) => {
        await deleteRunbook(params.id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'post',
      path: '/api/v1/runbooks/{id}/execute',
      tags,
      summary: 'Execute a runbook',
      description: `Queues an execution (202) and starts it through the workflow. A disabled runbook can still be executed by hand. Optional alert_id / incident_id give the workflow context (the execution then appears on the incident's timeline).\n\n${workflow}`,
      auth: 'key-or-sre',
      request: { params: idParams, body: s.executeBody },
      responses: { 202: { description: 'queued', schema: s.execution } },
      handler: ({ params, body }, ctx) => executeRunbook(params.id, { alert_id: body.alert_id, incident_id: body.incident_id, input: body.input, triggered_by: actorOf(ctx, body.by) }),
    })
    .route({
      method: 'get',
      path: '/api/v1/runbooks/{id}/executions',
      tags,
      summary: "A runbook's executions",
      auth: 'key-or-sre',
      request: { params: idParams, query: s.executionQuery.omit({ runbook_id: true }) },
      responses: { 200: { description: 'a page of executions', schema: s.executionPage } },
      handler: async ({ params, query }) => {
        await getRunbook(params.id);
        return listExecutions({ ...query, runbook_id: params.id });
      },
    });
  return router;
}
