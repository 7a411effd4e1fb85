/** Tools role: the issue-tracker MCP server (MCP_SERVICE_PORT, 9400) for coding assistants. */
import { configWithoutApiCredentials, ConfigError } from '../../shared/config.js';
import { drainOnShutdown, handleSignals } from '../../shared/lifecycle.js';
import { logger } from '../../shared/logger.js';
import { createTracker, trackerSettingsFromConfig } from '../../shared/issue-tracker/tracker.js';
import { identityProviderTokens, serviceTokens, type BearerAuth } from './auth.js';
import { loadIssueTrackerTools } from '../../shared/tool-catalog.js';
import { startToolServer } from './server.js';

try {
  // This role checks its own callers (MCP_SERVICE_TOKENS or the identity provider), never the API's keys.
  const cfg = configWithoutApiCredentials();
  const { toolServer } = cfg;
  const settings = trackerSettingsFromConfig();
  if ('missing' in settings && cfg.isProduction) throw new ConfigError(`Invalid configuration:\n${settings.missing.map((k) => `  ${k}: required by the tools role`).join('\n')}`);
  // A server nobody may call is a mistake, not a safe default.
  if (!toolServer.identityBaseUrl && toolServer.tokens.length === 0) {
    throw new ConfigError('Invalid configuration:\n  MCP_SERVICE_TOKENS: required by the tools role when IDENTITY_BASE_URL is unset');
  }
  const auth: BearerAuth = toolServer.identityBaseUrl
    ? identityProviderTokens(toolServer.identityBaseUrl, [toolServer.publicUrl, `${toolServer.publicUrl}/mcp`])
    : serviceTokens(toolServer.tokens);
  handleSignals();
  loadIssueTrackerTools();
  const tools = await startToolServer({
    port: toolServer.port,
    host: cfg.http.host,
    auth,
    publicUrl: toolServer.publicUrl,
    tracker: 'missing' in settings ? undefined : createTracker(settings),
  });
  // Behind a load balancer like the web role: keeps serving for the drain delay, then finishes the calls in flight.
  drainOnShutdown('tools-http', tools.server);
  const log = logger('tools');
  if ('missing' in settings) log.warn({ missing: settings.missing }, 'issue tracker not configured: its tools will say so when called');
  log.info({ url: `${tools.url}/mcp`, auth: toolServer.identityBaseUrl ? 'identity provider' : 'service tokens' }, 'issue-tracker MCP server listening');
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
