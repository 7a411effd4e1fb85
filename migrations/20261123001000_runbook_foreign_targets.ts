// Why: runbook workflow targets must lie under AUTOMATION_URL (the automation key goes nowhere else).
// Runbooks stored earlier with another host are disabled here, and say so in their description, so an
// operator sees them; their calls are refused at run time in any case (shared/clients/n8n.ts).
// The rule is written out here rather than imported, so this migration keeps meaning what it meant.
import type { Knex } from 'knex';

const marker = '[disabled by migration: workflow target not under AUTOMATION_URL]';

function underAutomation(target: string, base: string | undefined): boolean {
  if (target.startsWith('/') && !target.startsWith('//')) return true;
  if (!base) return false;
  try {
    const root = new URL(base);
    const rootPath = root.pathname.replace(/\/+$/, '');
    const url = new URL(target);
    return url.origin === root.origin && !url.username && !url.password && (url.pathname === rootPath || url.pathname.startsWith(`${rootPath}/`));
  } catch {
    return false;
  }
}

export async function up(knex: Knex): Promise<void> {
  const base = process.env.AUTOMATION_URL || undefined;
  const rows = (await knex('sre_runbooks').select('id', 'webhook_url', 'description')) as Array<{ id: string; webhook_url: string; description: string }>;
  const foreign = rows.filter((r) => !underAutomation(r.webhook_url, base));
  for (const r of foreign) {
    await knex('sre_runbooks')
      .where({ id: r.id })
      .update({ enabled: false, auto_trigger: false, description: r.description ? `${marker}\n${r.description}` : marker });
  }
  if (foreign.length) console.warn(`${foreign.length} runbook(s) disabled: their workflow target is not under AUTOMATION_URL (see their description)`);
}

export async function down(): Promise<void> {
  // Nothing to undo safely: re-enabling a foreign target is what this migration exists to prevent.
}
