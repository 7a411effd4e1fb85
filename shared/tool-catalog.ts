/**
 * Puts every domain's tools into the one registry (shared/tools.ts). Each entry file loads it once
 * (api/main.ts, workers/main.ts, the CLIs serving tools; in tests, startPlatform()): nothing below them imports
 * it, so the agent and the gateway stay free of the domains whose tools call back into them.
 */
import { registerToolSource, registerTools, setExecutorAccess } from './tools.js';
import { workflowToolSource } from './tool-gateway/workflow.tools.js';
import { crmTools } from './crm/crm.tools.js';
import { portalTools } from './portal/portal.tools.js';
import { sreTools } from './sre/sre.tools.js';
import { delegationTools } from './agent/delegation.tools.js';
import { issueTrackerTools } from './issue-tracker/issue-tracker.tools.js';

let loaded = false;

/** The tools the platform's agent, the tool gateway and /mcp offer. */
export function loadToolCatalog(): void {
  if (loaded) return;
  loaded = true;
  registerTools([
    // crm
    ...crmTools,
    // portal
    ...portalTools,
    // sre
    ...sreTools,
    // agent delegation
    ...delegationTools,
  ]);
  // workflow: tagged automation workflows, listed on demand
  registerToolSource(workflowToolSource);
  // Who may use each domain's tools: the people who may use its API (roles), keys with its scope.
  setExecutorAccess('crm', { roles: ['sales', 'sre'], scope: 'crm' });
  setExecutorAccess('sre', { roles: ['sre'], scope: 'sre' });
  setExecutorAccess('workflow', { roles: ['sre'], scope: 'sre' });
  setExecutorAccess('agent', { roles: ['sre'], scope: 'sessions' });
  setExecutorAccess('portal', { own: true });
}

let trackerLoaded = false;

/**
 * The issue-tracker tools (executor issue_tracker), loaded only by the tools role: they commit to the
 * repository with that server's token behind its own bearer check, so neither the API-key gateway nor
 * the user-facing agent offers them.
 */
export function loadIssueTrackerTools(): void {
  if (trackerLoaded) return;
  trackerLoaded = true;
  registerTools(issueTrackerTools);
}
