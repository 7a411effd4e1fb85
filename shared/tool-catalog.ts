/** Puts every domain's tools into the one registry (shared/tools.ts). Idempotent; call before listing tools. */
import { registerToolSource, registerTools } from './tools.js';
import { workflowToolSource } from './tool-gateway/workflow.tools.js';
import { crmTools } from './crm/crm.tools.js';
import { sreTools } from './sre/sre.tools.js';
import { delegationTools } from './agent/delegation.tools.js';

let loaded = false;

export function loadToolCatalog(): void {
  if (loaded) return;
  loaded = true;
  registerTools([
    // crm
    ...crmTools,
    // sre
    ...sreTools,
    // agent delegation
    ...delegationTools,
  ]);
  // workflow: tagged automation workflows, listed on demand
  registerToolSource(workflowToolSource);
}
