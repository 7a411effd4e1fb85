/**
 * The workflow executor: active automation (n8n) workflows tagged WORKFLOW_TOOL_TAG are offered as
 * tools. The list comes from GET /api/v1/workflows (active=true, tags=<tag>), cached for
 * WORKFLOW_TOOLS_TTL seconds and bounded (maxPages × pageSize workflows).
 *
 * Conventions (documented in the README):
 * - tool name: `workflow_` + the workflow name in lower case, other characters as `_` (64 characters at
 *   most; a name taken twice gets the workflow id appended);
 * - the workflow's first Webhook node (POST) starts it: `<AUTOMATION_URL>/webhook/<path>`; a tagged
 *   workflow without one is not offered;
 * - input: a JSON object handed to the webhook as its body; when the Webhook node's notes hold a JSON
 *   Schema object (`{"type":"object",…}`), that schema is what the tool listing shows;
 * - answer: the execution id and status when the workflow answers with `executionId`
 *   ("Respond to Webhook"), else status `success` and the webhook's body as `result`.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';
import { automation, type N8nWorkflow } from '../clients/n8n.js';
import { z } from '../zod.js';
import { type ToolDefinition, type ToolSource } from '../tools.js';

export const WORKFLOW_EXECUTOR = 'workflow';
const pageSize = 100;
const maxPages = 5;
const webhookType = 'n8n-nodes-base.webhook';

const freeForm = z.record(z.string(), z.unknown());

/** The tool name of a workflow name. */
export function workflowToolName(name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `workflow_${slug || 'unnamed'}`.slice(0, 64);
}

/** A JSON Schema object found in the webhook node's notes, if any. */
function notesSchema(notes: string | undefined): Record<string, unknown> | undefined {
  if (!notes?.trim().startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(notes) as Record<string, unknown>;
    return parsed && parsed.type === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function toTool(workflow: N8nWorkflow, name: string): ToolDefinition | null {
  const hook = workflow.nodes?.find((n) => n.type === webhookType && (n.parameters?.httpMethod ?? 'GET').toUpperCase() === 'POST');
  const path = hook?.parameters?.path || hook?.webhookId;
  const client = automation();
  const url = path ? client.webhookUrl(path) : null;
  if (!url) return null;
  return {
    name,
    description: `Start the automation workflow "${workflow.name}" (id ${workflow.id}) with the input as its webhook body; answers its result or its execution id and status.`,
    executor: WORKFLOW_EXECUTOR,
    // A workflow acts on other systems; what it does is not known here, so it is asked first.
    changesData: true,
    input: freeForm,
    jsonSchema: notesSchema(hook?.notes) ?? { type: 'object', additionalProperties: true, description: 'free-form input handed to the workflow' },
    handler: async (input) => {
      const answer = await client.triggerWebhook(url, input);
      const base = { workflow_id: String(workflow.id), workflow_name: workflow.name };
      if (!answer.executionId) return { ...base, execution_id: null, status: 'success', result: answer.body };
      const execution = await client.getExecution(answer.executionId);
      return { ...base, execution_id: answer.executionId, status: execution.status ?? (execution.finished ? 'success' : 'running'), result: answer.body };
    },
  };
}

/** Every tagged active workflow, a bounded number of pages. */
async function fetchWorkflows(): Promise<N8nWorkflow[]> {
  const client = automation();
  const all: N8nWorkflow[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { data, nextCursor } = await client.listWorkflows({ active: true, tags: config().tools.workflowTag, limit: pageSize, cursor });
    all.push(...data);
    if (!nextCursor) break;
    cursor = nextCursor;
  }
  // The tag filter is the server's; checked again so a server ignoring it offers nothing untagged.
  const tag = config().tools.workflowTag;
  return all.filter((w) => w.active && w.tags?.some((t) => t.name === tag));
}

function toTools(workflows: N8nWorkflow[]): ToolDefinition[] {
  const taken = new Set<string>();
  const tools: ToolDefinition[] = [];
  for (const w of [...workflows].sort((a, b) => String(a.id).localeCompare(String(b.id)))) {
    let name = workflowToolName(w.name);
    if (taken.has(name)) name = `${name.slice(0, 63 - String(w.id).length)}_${String(w.id).toLowerCase().replace(/[^a-z0-9]/g, '')}`;
    const tool = toTool(w, name);
    if (tool) {
      taken.add(name);
      tools.push(tool);
    }
  }
  return tools;
}

let cache: { at: number; tools: ToolDefinition[] } | undefined;
let refreshing: Promise<ToolDefinition[]> | undefined;

/** Forgets the cached list (tests, configuration changes). */
export function forgetWorkflowTools(): void {
  cache = undefined;
}

/** The workflow tools: cached for WORKFLOW_TOOLS_TTL; without AUTOMATION_URL none. */
export const workflowToolSource: ToolSource = {
  executor: WORKFLOW_EXECUTOR,
  async list() {
    if (!config().sre.automation.url) return [];
    if (cache && Date.now() - cache.at < config().tools.workflowTtlSeconds * 1000) return cache.tools;
    refreshing ??= fetchWorkflows()
      .then((workflows) => {
        cache = { at: Date.now(), tools: toTools(workflows) };
        return cache.tools;
      })
      .catch((err) => {
        // The automation system is down: keep offering the last list (or none) rather than failing every listing.
        logger('tools').warn({ err: (err as Error).message }, 'could not refresh the workflow tools');
        return cache?.tools ?? [];
      })
      .finally(() => (refreshing = undefined));
    return refreshing;
  },
};
