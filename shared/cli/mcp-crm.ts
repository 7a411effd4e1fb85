/**
 * MCP server of the CRM tools over stdio (`npm run -s mcp:crm`), for an assistant's `mcpServers` entry:
 *   { "command": "npx", "args": ["tsx", "shared/cli/mcp-crm.ts"], "cwd": "<checkout>", "env": { "DATABASE_URL": "postgres://..." } }
 * or { "command": "npm", "args": ["run", "-s", "mcp:crm"], ... } (-s: npm's own banner would otherwise reach stdout).
 * stdout carries the protocol only: logs go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { configWithoutApiCredentials, ConfigError } from '../config.js';
import { closeDb } from '../db/index.js';
import { logToStderr, logger } from '../logger.js';
import { createMcpServer } from '../mcp-server.js';
import { loadToolCatalog } from '../tool-catalog.js';

logToStderr();
try {
  // Spoken to over stdio only: no route, so none of the routes' credentials is required.
  configWithoutApiCredentials();
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
  process.exit(1);
}
loadToolCatalog();
const server = createMcpServer('crm', { kind: 'stdio', id: 'stdio' });
const transport = new StdioServerTransport();
transport.onclose = () => void closeDb().then(() => process.exit(0));
await server.connect(transport);
// The SDK's transport does not watch for the end of stdin, and the open database pool would keep
// this process alive after its assistant has gone (under `npx tsx`, the assistant's kill reaches npx, not us).
process.stdin.once('end', () => void transport.close());
logger('mcp-crm').info('CRM MCP server on stdio');
