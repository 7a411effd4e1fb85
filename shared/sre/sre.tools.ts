/**
 * The SRE service's operations as agent tools (executor type sre), calling the domain functions
 * in-process, so an assistant can work an incident end to end: read alerts and incidents,
 * acknowledge, read an entity's CMDB neighbourhood and monitors, run runbooks, note, escalate.
 * Every call that names an incident (or acknowledges an alert attached to one) lands on that
 * incident's timeline as an agent_action: tool, SHA-256 of the arguments, outcome.
 */
import { z, uuid } from '../zod.js';
import { asToolInput, defineTool, inputDigest, type ToolContext, type ToolDefinition } from '../tools.js';
import { logger } from '../logger.js';
import { getAlert, listAlerts } from './alerts/alert.store.js';
import { moveAlert } from './alerts/alerts.js';
import { getIncident, listIncidents, listTimeline, TimelineKind } from './incidents/incident.store.js';
import { escalateIncident, moveIncident, postTimeline } from './incidents/incidents.js';
import { entityDetail, entityNeighbourhood } from './cmdb/views.js';
import { listRunbooks } from './runbooks/runbook.store.js';
import { executionHistory, getExecution } from './runbooks/execution.store.js';
import { executeRunbook } from './runbooks/runbooks.js';

const executor = 'sre';
const limit = z.number().int().min(1).max(100).default(20).describe('how many (1-100, default 20)');

/** The timeline actor of a tool caller. */
export const assistantActor = (ctx: ToolContext) => (ctx.caller.kind === 'agent' ? `agent:${ctx.caller.id}` : ctx.caller.id);

/** Posts the agent_action entry of one call; an incident that does not exist has no timeline to land on. */
async function recordAction(incidentId: string, ctx: ToolContext, input: unknown, outcome: { ok: boolean; error?: string }) {
  const data = { tool: ctx.tool, arguments_sha256: inputDigest(input), outcome: outcome.ok ? 'ok' : 'error', ...(outcome.error ? { error: outcome.error } : {}) };
  await postTimeline(incidentId, { kind: TimelineKind.AgentAction, actor: assistantActor(ctx), message: `${ctx.tool}: ${data.outcome}`, data }).catch((err) =>
    logger('sre').debug({ err, incident_id: incidentId }, 'agent action not recorded: no such incident'),
  );
}

/**
 * Wraps a handler so its call is recorded on the incident it concerns: `incidentOf` names it from the
 * input, or from the result (e.g. the incident of an acknowledged alert).
 */
function onIncident<I extends object, R>(
  handler: (input: I, ctx: ToolContext) => Promise<R>,
  incidentOf: (input: I, result?: R) => string | null | undefined = (input) => (input as { incident_id?: string }).incident_id,
): (input: I, ctx: ToolContext) => Promise<R> {
  const wrapped = asToolInput(handler);
  return async (input, ctx) => {
    try {
      const result = await wrapped(input, ctx);
      const id = incidentOf(input, result);
      if (id) await recordAction(id, ctx, input, { ok: true });
      return result;
    } catch (err) {
      const id = incidentOf(input);
      if (id) await recordAction(id, ctx, input, { ok: false, error: err instanceof Error ? err.message.slice(0, 500) : String(err) });
      throw err;
    }
  };
}

export const sreTools: ToolDefinition<any>[] = [
  defineTool({
    name: 'sre_list_alerts',
    description: 'List alert instances, newest first, optionally by status (firing, acknowledged, resolved), severity or incident.',
    executor,
    changesData: false,
    input: z.object({
      status: z.enum(['firing', 'acknowledged', 'resolved']).optional(),
      severity: z.string().max(50).optional(),
      incident_id: uuid().optional().describe('only alerts attached to this incident'),
      limit,
    }),
    handler: async ({ status, severity, incident_id, limit }) => {
      const page = await listAlerts({ status: status ? [status] : undefined, severity: severity ? [severity] : undefined, incident_id, limit, offset: 0 });
      return { alerts: page.items, total: page.total };
    },
  }),
  defineTool({
    name: 'sre_get_alert',
    description: 'Get one alert instance (labels, annotations, status, incident).',
    executor,
    changesData: false,
    input: z.object({ alert_id: uuid() }),
    handler: ({ alert_id }) => getAlert(alert_id),
  }),
  defineTool({
    name: 'sre_acknowledge_alert',
    description: 'Acknowledge a firing alert (recorded in its history under the assistant\'s name).',
    executor,
    changesData: true,
    input: z.object({ alert_id: uuid(), note: z.string().max(2000).optional() }),
    handler: onIncident(
      ({ alert_id, note }, ctx) => moveAlert(alert_id, 'acknowledged', assistantActor(ctx), note),
      (_input, alert) => alert?.incident_id,
    ),
  }),
  defineTool({
    name: 'sre_list_incidents',
    description: 'List incidents, newest first, optionally by status (open, acknowledged, resolved, closed).',
    executor,
    changesData: false,
    input: z.object({ status: z.enum(['open', 'acknowledged', 'resolved', 'closed']).optional(), limit }),
    handler: async ({ status, limit }) => {
      const page = await listIncidents({ status: status ? [status] : undefined, limit, offset: 0 });
      return { incidents: page.items, total: page.total };
    },
  }),
  defineTool({
    name: 'sre_get_incident',
    description: 'Get one incident with its alerts and the latest 50 entries of its timeline.',
    executor,
    changesData: false,
    input: z.object({ incident_id: uuid() }),
    handler: onIncident(async ({ incident_id }) => {
      const incident = await getIncident(incident_id);
      const [alerts, timeline] = await Promise.all([listAlerts({ incident_id, limit: 100, offset: 0 }), listTimeline(incident_id, { limit: 50, offset: 0 })]);
      return { incident, alerts: alerts.items, timeline: timeline.items };
    }),
  }),
  defineTool({
    name: 'sre_acknowledge_incident',
    description: 'Acknowledge an open incident (stops its escalation timer).',
    executor,
    changesData: true,
    input: z.object({ incident_id: uuid(), note: z.string().max(2000).optional() }),
    handler: onIncident(({ incident_id, note }, ctx) => moveIncident(incident_id, 'acknowledged', assistantActor(ctx), note)),
  }),
  defineTool({
    name: 'sre_get_entity',
    description: 'Read a CMDB entity: its health, relationships, monitors and recommendations, and its neighbourhood within `depth` hops.',
    executor,
    changesData: false,
    input: z.object({ entity_id: uuid(), depth: z.number().int().min(1).max(3).default(1).describe('neighbourhood radius in hops (1-3)') }),
    handler: async ({ entity_id, depth }) => {
      const [entity, neighbourhood] = await Promise.all([entityDetail(entity_id), entityNeighbourhood(entity_id, depth)]);
      return { entity, neighbourhood };
    },
  }),
  defineTool({
    name: 'sre_list_runbooks',
    description: 'List runbooks (automated remediations), optionally searching their names.',
    executor,
    changesData: false,
    input: z.object({ search: z.string().max(200).optional(), limit }),
    handler: async ({ search, limit }) => {
      const page = await listRunbooks({ search, limit, offset: 0 });
      return { runbooks: page.items, total: page.total };
    },
  }),
  defineTool({
    name: 'sre_execute_runbook',
    description: 'Start a runbook; the answer is its execution (queued; follow it with sre_get_runbook_execution). Name the incident or alert it is for.',
    executor,
    changesData: true,
    input: z.object({
      runbook_id: uuid(),
      incident_id: uuid().optional(),
      alert_id: uuid().optional(),
      input: z.record(z.string(), z.unknown()).default({}).describe('input handed to the runbook\'s workflow'),
    }),
    handler: onIncident(({ runbook_id, incident_id, alert_id, input }, ctx) => executeRunbook(runbook_id, { incident_id, alert_id, input, triggered_by: assistantActor(ctx) })),
  }),
  defineTool({
    name: 'sre_get_runbook_execution',
    description: 'Get one runbook execution (status: queued, running, success, failed, timed_out) with its history.',
    executor,
    changesData: false,
    input: z.object({ execution_id: uuid() }),
    handler: async ({ execution_id }) => ({ execution: await getExecution(execution_id), history: await executionHistory(execution_id) }),
  }),
  defineTool({
    name: 'sre_add_timeline_note',
    description: 'Add a note to an incident\'s timeline (findings, what was tried).',
    executor,
    changesData: true,
    input: z.object({ incident_id: uuid(), message: z.string().trim().min(1).max(4000) }),
    handler: onIncident(async ({ incident_id, message }, ctx) => {
      await postTimeline(incident_id, { kind: TimelineKind.Comment, actor: assistantActor(ctx), message });
      return { incident_id, noted: true };
    }),
  }),
  defineTool({
    name: 'sre_escalate_incident',
    description: 'Escalate an incident to a human (recorded on the timeline and sent to the escalation webhook). Say why.',
    executor,
    changesData: true,
    input: z.object({ incident_id: uuid(), reason: z.string().trim().min(1).max(2000) }),
    handler: onIncident(({ incident_id, reason }, ctx) => escalateIncident(incident_id, assistantActor(ctx), reason)),
  }),
];
