/** Writes .env.example from the config schema: one commented line per variable (npm run env:example). */
import { writeFileSync } from 'node:fs';
import { variables } from '../config.js';

const lines = ['# switchboard configuration: every variable, its meaning and default. Copy to .env or export.', ''];
for (const [name, [schema, description]] of Object.entries(variables)) {
  const parsed = (schema as { safeParse: (v: unknown) => { success: boolean; data?: unknown } }).safeParse(undefined);
  const fallback = parsed.success && parsed.data !== undefined ? String(parsed.data) : '';
  lines.push(`# ${description}`, `#${name}=${fallback}`);
}
writeFileSync('.env.example', `${lines.join('\n')}\n`);
console.log(`.env.example: ${Object.keys(variables).length} variables`);
