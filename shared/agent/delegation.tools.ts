/** The agent-delegation executor's tools: hand a task to the platform's agent, and ask how a run went. */
import { config } from '../config.js';
import { z, uuid } from '../zod.js';
import { defineTool, type ToolDefinition } from '../tools.js';
import { delegate, DELEGATION_EXECUTOR, mayReadRun, runView } from './delegation.js';
import { NotFoundError } from '../errors.js';
import { getRun } from './delegation-runs.store.js';

/** The longest wait that still leaves the gateway's time limit room to answer. */
const maxWaitMs = () => Math.max(0, config().tools.callTimeoutMs - 1000);

export const delegationTools: ToolDefinition<any>[] = [
  defineTool({
    name: 'agent_delegate',
    description: [
      'Hand a task to the platform\'s agent, which works it with the platform\'s tools (CRM, SRE, workflows) and the rights of the caller in a session:',
      'a person\'s own; for a key the platform\'s service user\'s, or that of user_id when the key holds portal:impersonate. Answers with the agent\'s answer when it finishes within wait_seconds; otherwise',
      'with run_id and status queued/running: ask agent_delegation_status later. The run\'s tool calls appear on the session\'s event stream.',
    ].join(' '),
    executor: DELEGATION_EXECUTOR,
    changesData: false,
    input: z.object({
      task: z.string().trim().min(1).max(16_000).describe('what the agent should do, in plain language'),
      user_id: uuid().optional().describe('the user in whose session the agent works (a person: only their own; a key: needs portal:impersonate); omitted: the caller\'s own session, for a key the service user\'s'),
      wait_seconds: z.number().int().min(0).max(600).optional().describe('how long to wait for the answer (default AGENT_DELEGATION_WAIT_MS, capped below the gateway time limit)'),
    }),
    handler: ({ task, user_id, wait_seconds }, ctx) => {
      const wait = wait_seconds === undefined ? config().tools.delegationWaitMs : wait_seconds * 1000;
      return delegate({ task, user_id }, ctx.caller, Math.min(wait, maxWaitMs()));
    },
  }),
  defineTool({
    name: 'agent_delegation_status',
    description: 'The status of a delegated run (queued, running, completed, failed) and, once completed, the agent\'s answer.',
    executor: DELEGATION_EXECUTOR,
    changesData: false,
    input: z.object({ run_id: uuid() }),
    handler: async ({ run_id }, { caller }) => {
      const run = await getRun(run_id);
      // Another caller's run is as unknown as a missing one.
      if (!mayReadRun(run, caller.authority)) throw new NotFoundError(`No delegation run ${run_id}.`);
      return runView(run);
    },
  }),
];
