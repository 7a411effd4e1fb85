/** Starts the HTTP server of the web role and registers its orderly shutdown. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from './app.js';
import type { ApiRouter } from './routing.js';
import { drainOnShutdown } from '../shared/lifecycle.js';
import { endAllStreams } from './stream/sse.js';
import { attachVoiceRelay } from './channels/voice.routes.js';

/**
 * Listens on port/host. On shutdown (/readyz already answers 503): keeps serving for the drain delay,
 * then stops accepting, tells each SSE client to reconnect elsewhere and ends its stream, and waits
 * for the requests in flight (shared/lifecycle.ts, drainOnShutdown).
 */
export async function startServer(port: number, host: string, extra: ApiRouter[] = [], options: Omit<AppOptions, 'server'> = {}): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer();
  const app = createApp(extra, { ...options, server });
  server.on('request', app.callback());
  // The voice channel's ConversationRelay socket shares the API's port.
  attachVoiceRelay(server);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: actual } = server.address() as AddressInfo;
  drainOnShutdown('http', server, endAllStreams);
  return { server, url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actual}` };
}
