/**
 * Roles as their own processes for the drain tests (test/platform/drain.test.ts, rolling-restart.test.ts):
 * the environment they start with, an API client for a started web process, and an SSE reader that
 * reports what a client sees (events, the server's retry: hint, the end of the stream).
 */
import http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { startRole } from '../bench/bench-platform.js';
import { testApiKey, type Platform } from './platform.js';

/** The environment of a role started by a test, on the file's database and queue prefix. */
export function roleProcessEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: testApiKey, WORKER_METRICS_PORT: '0', SESSION_PUBLISH_WAIT_MS: '0', ...extra };
}

/** Starts the web role; resolves with the process and its address. */
export async function startWeb(extra: NodeJS.ProcessEnv = {}) {
  const { child, line } = await startRole('api/main.ts', roleProcessEnv(extra), /API listening/);
  return { child, url: /"url":"([^"]+)"/.exec(line)![1]! };
}

/** Starts the worker role; resolves with the process and the address of its probes. */
export async function startWorker(extra: NodeJS.ProcessEnv = {}) {
  const { child, line } = await startRole('workers/main.ts', roleProcessEnv(extra), /workers running/);
  // The probes share the port of /metrics.
  return { child, probes: /"metrics":"(http:\/\/[^"]+)\/metrics"/.exec(line)![1]! };
}

/** An API client of a web process (the shape test/sessions/helpers.ts takes). */
export function platformAt(url: string): Platform {
  return {
    url,
    request: (path, init = {}) => {
      const { json, auth = true, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (auth && !headers.has('X-API-Key')) headers.set('X-API-Key', testApiKey);
      if (json !== undefined) headers.set('Content-Type', 'application/json');
      return fetch(url + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
  };
}

export interface SseRead {
  /** Resolves with the HTTP status once the server answered (0: no answer). */
  opened: Promise<number>;
  /** Resolves once the stream ended: 'ended' when the server ended it, else the error. */
  ended: Promise<string>;
  /** The last retry: hint the server sent, if any. */
  retry(): number | undefined;
  close(): void;
}

/** Opens one session stream (no reconnection: the caller decides where and when). */
export function readSse(url: string, onEvent: (e: EventSourceMessage) => void, lastEventId?: string): SseRead {
  let retry: number | undefined;
  const parser = createParser({ onEvent, onRetry: (ms) => void (retry = ms) });
  let settle!: (why: string) => void;
  const ended = new Promise<string>((resolve) => (settle = resolve));
  const req = http.get(url, { agent: false, headers: { Accept: 'text/event-stream', 'X-API-Key': testApiKey, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } });
  const opened = new Promise<number>((resolve) => {
    req.once('response', (res) => {
      resolve(res.statusCode ?? 0);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      res.once('end', () => settle('ended'));
      res.once('error', (err) => settle(err.message));
      res.once('close', () => settle(res.complete ? 'ended' : 'aborted'));
    });
    req.once('error', (err) => {
      resolve(0);
      settle(err.message);
    });
  });
  return { opened, ended, retry: () => retry, close: () => req.destroy() };
}
