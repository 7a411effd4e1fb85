/**
 * npm run mcp:config [-- --out FILE] [--api-url URL] [--tools-url URL]
 *   writes the coding assistants' mcpServers file for this platform (stdout by default);
 * npm run mcp:config -- --check FILE [--timeout MS]
 *   validates a file (shape, no real secrets where placeholders belong, an MCP handshake with each local
 *   server) and exits 1 when something is wrong.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config.js';
import { checkMcpConfig, generateMcpConfig } from '../mcp-config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.js') ? '../../..' : '../..');

const { values } = parseArgs({
  options: {
    check: { type: 'string' },
    out: { type: 'string' },
    'api-url': { type: 'string' },
    'tools-url': { type: 'string' },
    timeout: { type: 'string', default: '20000' },
  },
});

if (values.check) {
  let text: string;
  try {
    text = readFileSync(values.check, 'utf8');
  } catch (err) {
    console.error(`cannot read ${values.check}: ${(err as Error).message}`);
    process.exit(2);
  }
  const report = await checkMcpConfig(text, Number(values.timeout));
  for (const line of report.lines) console.log(line);
  console.log(report.ok ? `${values.check}: ok` : `${values.check}: NOT OK`);
  process.exit(report.ok ? 0 : 1);
}

let cfg;
try {
  // Writes a file for coding assistants; it serves nothing, so the API's credentials are not needed here.
  cfg = loadConfig(process.env, { credentials: false });
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : String(err));
  process.exit(1);
}
const file = generateMcpConfig({
  root,
  apiUrl: values['api-url'] ?? `http://localhost:${cfg.http.port}`,
  toolsUrl: values['tools-url'] ?? cfg.toolServer.publicUrl,
  databaseUrl: cfg.db.url,
});
const text = `${JSON.stringify(file, null, 2)}\n`;
if (values.out) {
  writeFileSync(values.out, text);
  console.error(`wrote ${values.out} (${Object.keys(file.mcpServers).length} servers)`);
} else process.stdout.write(text);
