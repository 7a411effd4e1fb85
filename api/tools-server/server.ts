/**
 * The issue-tracker tool server: MCP over Streamable HTTP at /mcp (official SDK, stateless: every POST
 * carries its JSON-RPC message and is answered with JSON), serving the registry's issue_tracker tools.
 * Every /mcp request needs a bearer token (auth.ts); without one nothing reaches the tracker.
 *
 *   POST /mcp                                   MCP (GET and DELETE: 405, no sessions are kept)
 *   GET  /.well-known/oauth-protected-resource  RFC 9728 metadata naming the identity provider (IDENTITY_BASE_URL only)
 *   GET  /healthz                               liveness: the process answers
 *   GET  /readyz                                readiness: not stopping (the tracker is asked per call, not probed)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from '../../shared/mcp-server.js';
import { withTracker, type Tracker } from '../../shared/issue-tracker/tracker.js';
import { problemTypeBase } from '../../shared/errors.js';
import { logger } from '../../shared/logger.js';
import { isStopping } from '../../shared/lifecycle.js';
import { bearerToken, InvalidTokenError, TokenCheckUnavailableError, type BearerAuth } from './auth.js';

export interface ToolServerOptions {
  port: number;
  host?: string;
  auth: BearerAuth;
  /** Public address of this server (links in its metadata); default its listening address. */
  publicUrl?: string;
  /** The tracker its tools call; default the one from ISSUE_TRACKER_* (a tool call says what is missing). */
  tracker?: Tracker;
}

export interface ToolServer {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

const log = () => logger('tools');

/** Problem type slugs of the answers this server gives itself (the same as the API's for these statuses). */
const slugs: Record<number, string> = { 401: 'unauthorized', 404: 'not-found', 500: 'internal', 503: 'unavailable' };

function problem(res: http.ServerResponse, status: 401 | 404 | 500 | 503, title: string, detail: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ type: `${problemTypeBase}${slugs[status]}`, title, status, detail }));
}

/** WWW-Authenticate of a 401 (RFC 6750 §3: no error code when no credentials were sent). */
function challenge(resourceMetadata: string | undefined, error?: string): string {
  const parts = ['realm="issue-tracker"'];
  if (error) parts.push('error="invalid_token"', `error_description="${error.replace(/["\\]/g, "'")}"`);
  if (resourceMetadata) parts.push(`resource_metadata="${resourceMetadata}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** Starts the server on port/host (0 = a free port). */
export async function startToolServer(opts: ToolServerOptions): Promise<ToolServer> {
  let publicUrl = opts.publicUrl?.replace(/\/+$/, '');
  const metadataUrl = () => (opts.auth.identityBaseUrl ? `${publicUrl}/.well-known/oauth-protected-resource` : undefined);

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    // The tracker is an outside service each call reaches with its caller's rights: its outage is said by
    // the call that meets it, not by taking every replica out of the balancer.
    if (path === '/readyz' && req.method === 'GET') {
      res.writeHead(isStopping() ? 503 : 200, { 'Content-Type': 'application/json' }).end(isStopping() ? '{"status":"stopping"}' : '{"status":"ready"}');
      return;
    }
    if (path.startsWith('/.well-known/oauth-protected-resource') && req.method === 'GET' && opts.auth.identityBaseUrl) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ resource: `${publicUrl}/mcp`, authorization_servers: [opts.auth.identityBaseUrl], bearer_methods_supported: ['header'] }));
      return;
    }
    if (path !== '/mcp') return problem(res, 404, 'Not Found', `No route ${req.method} ${path}; MCP is served at POST /mcp.`);

    const token = bearerToken(req.headers.authorization);
    if (!token) {
      return problem(res, 401, 'Unauthorized', 'Send Authorization: Bearer <token>.', { 'WWW-Authenticate': challenge(metadataUrl()) });
    }
    let subject: string;
    try {
      subject = (await opts.auth.verify(token)).subject;
    } catch (err) {
      if (err instanceof InvalidTokenError) {
        return problem(res, 401, 'Unauthorized', `The bearer token was refused: ${err.message}.`, { 'WWW-Authenticate': challenge(metadataUrl(), err.message) });
      }
      if (err instanceof TokenCheckUnavailableError) {
        log().error({ err: err.message }, 'token check unavailable');
        return problem(res, 503, 'Service Unavailable', 'The token cannot be checked right now (identity provider unreachable); retry later.', { 'Retry-After': '5' });
      }
      throw err;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, send POST /mcp.' }, id: null }));
      return;
    }
    const server = createMcpServer('issue_tracker');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    log().debug({ subject }, 'mcp request');
    const run = () => transport.handleRequest(req, res);
    await (opts.tracker ? withTracker(opts.tracker, run) : run());
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      log().error({ err }, 'tool server request failed');
      if (!res.headersSent) problem(res, 500, 'Internal Server Error', 'The request failed; see the server log.');
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host ?? '0.0.0.0', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${!opts.host || opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host}:${port}`;
  publicUrl ??= url;
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

