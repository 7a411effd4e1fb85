/**
 * Agent delegation (executor `agent`): an assistant hands a task to the platform's agent, which works
 * it with the platform's tools in the session of a given user (or of a service user created on
 * demand). The run goes through the `agent.delegate` job; its TOOL_CALL / TOOL_RESULT events, the task
 * and the answer appear on the session's stream (channel chat). A retried job replays the tool
 * results it already recorded instead of calling those tools again.
 */
import { config } from '../config.js';
import { ConflictError, ForbiddenError } from '../errors.js';
import { hasScope, type Authority } from '../auth/scopes.js';
import { enqueue, jobEvents } from '../queues.js';
import { logger } from '../logger.js';
import { createUser, findUserByPhone, getUser, type User } from '../users/users.store.js';
import { resolveSession } from '../sessions/resolve.js';
import { startInteraction } from '../sessions/interactions.js';
import { acceptMessage } from '../stream/index.js';
import { assertSessionSystemOn, runTurn } from '../channels/turn.js';
import { WEB_CHANNEL } from './session-turn.js';
import type { ToolCaller } from '../tools.js';
import { finishRun, getRun, insertRun, markRunning, recordToolResult, type DelegationRun } from './delegation-runs.store.js';

/** Executor type of the delegation tools; a delegated run is not offered them (no delegation loops). */
export const DELEGATION_EXECUTOR = 'agent';

/** The service user delegations without a user run as, created on first use. */
async function serviceUser(): Promise<User> {
  const phone = config().tools.serviceUserPhone;
  const found = await findUserByPhone(phone);
  if (found) return found;
  try {
    return await createUser({ phone_number: phone, display_name: 'switchboard agent (service user)' });
  } catch (err) {
    // Created concurrently by another delegation.
    if (err instanceof ConflictError) return (await findUserByPhone(phone))!;
    throw err;
  }
}

/**
 * Whose session a delegation works in. A person (or the assistant serving one) only ever their own;
 * a key the service user's, or a named user's when it may act as users (portal:impersonate).
 */
async function delegationTarget(userId: string | undefined, authority: Authority): Promise<User> {
  if (authority.kind === 'person') {
    if (userId && userId !== authority.user_id) throw new ForbiddenError('A delegation works only in your own session: leave out user_id or give your own.', [{ path: 'input.user_id', message: 'not your own user' }]);
    return getUser(authority.user_id);
  }
  if (!userId) return serviceUser();
  if (authority.kind === 'local' || (authority.kind === 'key' && hasScope(authority.scopes, 'portal:impersonate'))) return getUser(userId);
  throw new ForbiddenError('Delegating into a user\'s session acts as that user: the key needs the scope portal:impersonate.', [{ path: 'input.user_id', message: 'needs portal:impersonate' }]);
}

/** Whether a caller may read a run: the one who asked for it (same key or person), or a full-access caller. */
export function mayReadRun(run: DelegationRun, authority: Authority | undefined): boolean {
  const asked = run.authority;
  if (!authority || authority.kind === 'none') return false;
  if (authority.kind === 'local' || (authority.kind === 'key' && authority.scopes.includes('*'))) return true;
  if (authority.kind === 'key') return asked.kind === 'key' && asked.key_id === authority.key_id;
  return asked.kind === 'person' && asked.user_id === authority.user_id;
}

/** What the delegation tools answer about a run. */
export function runView(run: DelegationRun) {
  return {
    run_id: run.id,
    status: run.status,
    session_id: run.session_id,
    interaction_id: run.interaction_id,
    user_id: run.user_id,
    answer: run.answer,
    error: run.error,
    tool_calls: Object.values(run.tool_results).map((r) => ({ tool_name: r.tool_name, ok: r.ok })),
  };
}

/**
 * Starts a delegation and waits up to `waitMs` for its answer; a longer run answers with its handle
 * (run_id, status queued or running) for agent_delegation_status.
 */
export async function delegate(input: { task: string; user_id?: string }, caller: ToolCaller, waitMs: number) {
  assertSessionSystemOn();
  const authority = caller.authority ?? { kind: 'none' };
  const user = await delegationTarget(input.user_id, authority);
  const { session } = await resolveSession(user.user_id);
  const interaction = await startInteraction(session.session_id, { channel: WEB_CHANNEL });
  const run = await insertRun({ user_id: user.user_id, session_id: session.session_id, interaction_id: interaction.interaction_id, task: input.task, requested_by: `${caller.kind}:${caller.id}`, authority });
  // Waiting for the task to be persisted puts it in the history the run reads.
  await acceptMessage(
    session.session_id,
    { channel: WEB_CHANNEL, role: 'user', content: input.task, interaction_id: interaction.interaction_id, metadata: { delegation_run_id: run.id, requested_by: run.requested_by } },
    { idempotencyKey: `delegation:${run.id}:task`, waitMs: config().sessions.publishWaitMs },
  );
  const job = await enqueue('agent.delegate', { run_id: run.id });
  if (waitMs > 0) {
    try {
      await job.waitUntilFinished(await jobEvents('agent.delegate'), waitMs);
    } catch (err) {
      // Not finished in time (or failed): the run's row says which.
      logger('agent').debug({ err, run_id: run.id }, 'delegation not finished within the wait');
    }
  }
  return runView(await getRun(run.id));
}

/** The `agent.delegate` job: runs the agent on the task once, publishes the answer, records the outcome. */
export async function runDelegation(runId: string, finalAttempt: boolean): Promise<{ status: string }> {
  const run = await getRun(runId);
  if (run.status === 'completed' || run.status === 'failed') return { status: run.status };
  await markRunning(runId);
  // The turn's journal keeps the intents and model answers; the run's row the results it shows.
  const { reply, error } = await runTurn({
    channel: WEB_CHANNEL,
    session_id: run.session_id,
    interaction_id: run.interaction_id,
    user_id: run.user_id,
    message: run.task,
    published: true,
    journalKey: `delegation:${runId}`,
    finalAttempt,
    // The task is the asking agent's text, not the person's: it can ask for a change, never confirm one.
    fromPerson: false,
    // The delegated agent works with the rights of whoever asked, re-read at each tool call.
    authority: run.authority,
    excludeExecutors: [DELEGATION_EXECUTOR],
    recorded: run.tool_results,
    onToolResult: (key, record) => recordToolResult(runId, key, record),
    publish: { idempotencyKey: `delegation:${runId}:answer`, metadata: () => ({ delegation_run_id: runId }) },
  });
  if (error) {
    await finishRun(runId, { status: 'failed', error: error instanceof Error ? error.message : String(error) });
    return { status: 'failed' };
  }
  await finishRun(runId, { status: 'completed', answer: reply });
  return { status: 'completed' };
}
