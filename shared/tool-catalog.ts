/** Puts every domain's tools into the one registry (shared/tools.ts). Idempotent; call before listing tools. */
import { registerTools } from './tools.js';
import { crmTools } from './crm/crm.tools.js';
import { issueTrackerTools } from './issue-tracker/issue-tracker.tools.js';

let loaded = false;

/** The tools the platform's agent, the tool gateway and /mcp offer. */
export function loadToolCatalog(): void {
  if (loaded) return;
  loaded = true;
  registerTools([
    // crm
    ...crmTools,
  ]);
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
