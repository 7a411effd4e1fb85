// Why: matchers now follow Alertmanager's RE2 syntax (checked at write time). Incident rules and runbooks
// stored earlier with a pattern RE2 refuses (a back-reference can backtrack for seconds in Postgres'
// matching) or longer than 1,000 characters are disabled here, so alert ingest no longer evaluates them;
// the operator fixes the pattern and enables them again. The check is written out here (not imported),
// so this migration keeps meaning what it meant.
import type { Knex } from 'knex';
import { RE2JS } from 're2js';

type Matcher = { op?: string; value?: string };

function acceptable(matchers: Matcher[]): boolean {
  return matchers.every((m) => {
    if (typeof m.value === 'string' && m.value.length > 1000) return false;
    if (m.op !== '=~' && m.op !== '!~') return true;
    try {
      RE2JS.compile(`^(?:${m.value ?? ''})$`);
      return true;
    } catch {
      return false;
    }
  });
}

export async function up(knex: Knex): Promise<void> {
  for (const table of ['sre_incident_rules', 'sre_runbooks']) {
    const rows = (await knex(table).where({ enabled: true }).select('id', 'name', 'matchers')) as Array<{ id: string; name: string; matchers: Matcher[] }>;
    const bad = rows.filter((r) => !acceptable(Array.isArray(r.matchers) ? r.matchers : []));
    if (!bad.length) continue;
    await knex(table).whereIn('id', bad.map((r) => r.id)).update({ enabled: false });
    console.warn(`${table}: disabled ${bad.length} with a matcher that is not an RE2 pattern: ${bad.map((r) => r.name).join(', ')}`);
  }
}

export async function down(): Promise<void> {
  // Nothing to undo safely: enabling them again would bring the unbounded patterns back.
}
