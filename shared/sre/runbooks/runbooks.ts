/** Runbook executions: started by API or by alerts, run through n8n, followed until they finish. */
import { UnrecoverableError } from 'bullmq';
import { enqueue } from '../../queues.js';
import { automation, boundedResult, ForeignTargetError, workflowUrl, type N8nExecutionStatus } from '../../clients/n8n.js';
import { ValidationError } from '../../errors.js';
import { ExternalHttpError } from '../../clients/http.js';
import { getAlert } from '../alerts/alert.store.js';
import { getIncident } from '../incidents/incident.store.js';
import { getRunbook } from './runbook.store.js';
import {
  executionContext,
  executionsToRefresh,
  getExecution,
  insertManualExecution,
  moveExecution,
  staleQueuedExecutions,
  type Execution,
  type ExecutionStatus,
} from './execution.store.js';
import { publishSreEvent } from '../events.js';

/** Refuses (400 naming the field) a workflow target that is not a webhook of the configured automation system. */
export function assertWorkflowTarget(target: string, path = 'body.webhook_url'): void {
  try {
    workflowUrl(target, undefined, { webhookOnly: true });
  } catch (err) {
    if (err instanceof ForeignTargetError) throw new ValidationError(`The workflow target ${err.message}`, [{ path, message: err.message }]);
    throw err;
  }
}

/** POST /runbooks/{id}/execute: queues an execution (a disabled runbook can still be run by hand). */
export async function executeRunbook(runbookId: string, input: { alert_id?: string; incident_id?: string; triggered_by: string; input: Record<string, unknown> }): Promise<Execution> {
  await getRunbook(runbookId);
  if (input.alert_id) await getAlert(input.alert_id);
  if (input.incident_id) await getIncident(input.incident_id);
  const id = await insertManualExecution({ runbook_id: runbookId, ...input });
  publishSreEvent('runbook_execution.changed', { id, runbook_id: runbookId, status: 'queued', by: input.triggered_by });
  await enqueue('sre.runbook-execute', { execution_id: id });
  return getExecution(id);
}

/** Job: starts the workflow through its webhook. An answer carrying an execution id leaves it running (the refresh follows it). */
export async function startExecution(executionId: string, attempt: { made: number; max: number }): Promise<ExecutionStatus> {
  const ctx = await executionContext(executionId);
  // Already started by an earlier attempt (it answered with an id) or finished: nothing to do.
  if (ctx.status !== 'queued' && !(ctx.status === 'running' && !ctx.external_execution_id)) return ctx.status;
  if (ctx.status === 'running') {
    // An earlier call's outcome is unknown (its answer was lost, or its worker died): the workflow
    // may be running. Look it up instead of starting it a second time.
    if (!ctx.workflow_id) {
      const error = 'an earlier call of the workflow may have started it (its answer was lost) and the runbook has no workflow_id to look it up: not called again';
      await moveExecution(executionId, ['running'], 'failed', { error, detail: error });
      throw new UnrecoverableError(error);
    }
    const found = await automation().findExecution(ctx.workflow_id, executionId);
    if (found) {
      await moveExecution(executionId, ['running'], 'running', { external_execution_id: String(found.id), detail: `automation execution ${found.id} (found after a lost answer)` });
      return 'running';
    }
  }
  // Recorded before the call: a retry that finds 'running' without an external id knows a call may have happened.
  await moveExecution(executionId, ['queued'], 'running', { detail: 'webhook called' });
  const body = {
    execution_id: ctx.id,
    runbook: { id: ctx.runbook_id, name: ctx.runbook_name, workflow_id: ctx.workflow_id },
    trigger: ctx.trigger,
    triggered_by: ctx.triggered_by,
    parameters: { ...ctx.parameters, ...ctx.input },
    alert: ctx.alert_id ? { id: ctx.alert_id, fingerprint: ctx.fingerprint, status: ctx.alert_status, labels: ctx.labels, annotations: ctx.annotations } : null,
    incident_id: ctx.incident_id,
  };
  try {
    const answer = await automation().triggerWebhook(ctx.webhook_url, body);
    if (answer.executionId) {
      await moveExecution(executionId, ['running'], 'running', { external_execution_id: answer.executionId, detail: `automation execution ${answer.executionId}` });
      return 'running';
    }
    await moveExecution(executionId, ['running'], 'success', { result: boundedResult(answer.body), detail: `webhook answered ${answer.status}` });
    return 'success';
  } catch (err) {
    const permanent = (err instanceof ExternalHttpError && err.permanent) || err instanceof ForeignTargetError;
    // Refused (connection refused, n8n unavailable): the workflow did not start; the retry calls it
    // plainly. A timeout or another error leaves the outcome unknown: the retry looks it up.
    const notStarted = err instanceof ExternalHttpError && (err.status === undefined ? /fetch failed/.test(err.message) : [503].includes(err.status));
    if (!permanent && notStarted && attempt.made + 1 < attempt.max) {
      await moveExecution(executionId, ['running'], 'queued', { detail: `webhook unreachable: ${err.message}` });
      throw err;
    }
    if (permanent || attempt.made + 1 >= attempt.max) {
      await moveExecution(executionId, ['queued', 'running'], 'failed', { error: (err as Error).message, detail: (err as Error).message });
      throw new UnrecoverableError((err as Error).message);
    }
    throw err;
  }
}

const statusMap: Record<N8nExecutionStatus, ExecutionStatus | null> = {
  success: 'success',
  error: 'failed',
  crashed: 'failed',
  canceled: 'failed',
  running: null,
  new: null,
  waiting: null,
  unknown: null,
};

/** Scheduled: follows running executions in the automation API, times out overdue ones, re-queues lost ones. */
export async function refreshExecutions(): Promise<{ refreshed: number; finished: number; timedOut: number; requeued: number }> {
  const client = automation();
  let finished = 0;
  let timedOut = 0;
  const running = await executionsToRefresh();
  for (const e of running) {
    if (e.external_execution_id) {
      try {
        const remote = await client.getExecution(e.external_execution_id);
        const to = remote.status ? statusMap[remote.status] : remote.finished ? 'success' : null;
        if (to && (await moveExecution(e.id, ['running'], to, { result: boundedResult(remote), detail: `automation status ${remote.status ?? 'finished'}` }))) {
          finished += 1;
          continue;
        }
      } catch {
        // The automation API being down leaves the execution running; the timeout below still applies.
      }
    }
    if (e.overdue && (await moveExecution(e.id, ['running'], 'timed_out', { error: 'no result within the runbook timeout', detail: 'timeout' }))) timedOut += 1;
  }
  const stale = await staleQueuedExecutions(60);
  for (const id of stale) await enqueue('sre.runbook-execute', { execution_id: id });
  return { refreshed: running.length, finished, timedOut, requeued: stale.length };
}
