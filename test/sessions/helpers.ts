/** Helpers of the session memory tests: users, sessions and interactions through the HTTP API. */
import { EventSource } from 'eventsource';
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { Platform } from '../helpers/platform.js';

export const randomPhone = () => `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

export async function json<T = any>(res: Response, status: number): Promise<T> {
  const body = await res.json();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(body)}`);
  return body as T;
}

export async function newUser(api: Platform): Promise<string> {
  const user = await json(await api.request('/api/users', { method: 'POST', json: { phone_number: randomPhone(), display_name: 'Test' } }), 201);
  return user.user_id;
}

export async function newSession(api: Platform, userId?: string): Promise<{ userId: string; sessionId: string }> {
  const uid = userId ?? (await newUser(api));
  const resolved = await json(await api.request('/api/sessions/resolve', { method: 'POST', json: { user_id: uid } }), 200);
  return { userId: uid, sessionId: resolved.session_id };
}

export async function newInteraction(api: Platform, sessionId: string, channel: string, channelRef?: string): Promise<string> {
  const interaction = await json(await api.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel, channel_ref: channelRef } }), 201);
  return interaction.interaction_id;
}

export async function publish(api: Platform, sessionId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return api.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: body, headers });
}

export function expectFieldError(body: { errors?: Array<{ path: string }> }, path: string) {
  expect(body.errors?.map((e) => e.path)).toContain(path);
}

export interface Received {
  id: number;
  envelope: { event_type: string; session_id: string; channel: string; data: Record<string, any> };
}

export interface Subscriber {
  es: EventSource;
  events: Received[];
  /** Resolves once `count` events arrived (or rejects after `ms`). */
  waitFor: (count: number, ms?: number) => Promise<Received[]>;
  opened: Promise<void>;
  close: () => void;
}

/** A real SSE client (the `eventsource` package) on a session's stream, authenticated by bearer token or X-API-Key. */
export function subscribe(
  url: string,
  sessionId: string,
  channel: string,
  options: { apiKey: string; scheme?: 'bearer' | 'x-api-key'; lastEventId?: number } = { apiKey: 'test-key' },
): Subscriber {
  const events: Received[] = [];
  const authHeader: Record<string, string> = options.scheme === 'x-api-key' ? { 'X-API-Key': options.apiKey } : { Authorization: `Bearer ${options.apiKey}` };
  const es = new EventSource(`${url}/api/sessions/${sessionId}/events?channel=${channel}`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: <Record<string, string>>{
          ...init.headers,
          ...authHeader,
          ...(options.lastEventId !== undefined && !init.headers['Last-Event-ID'] ? { 'Last-Event-ID': String(options.lastEventId) } : {}),
        },
      }),
  });
  let waiters: Array<() => void> = [];
  es.onmessage = (e) => {
    events.push({ id: Number(e.lastEventId), envelope: JSON.parse(e.data) });
    waiters.forEach((w) => w());
  };
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => {
      if (es.readyState === es.CLOSED) reject(new Error(`SSE failed: ${(e as { message?: string }).message}`));
    };
  });
  const waitFor = (count: number, ms = 10_000) =>
    new Promise<Received[]>((resolve, reject) => {
      const check = () => {
        if (events.length >= count) {
          waiters = waiters.filter((w) => w !== check);
          clearTimeout(timer);
          resolve(events);
        }
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((w) => w !== check);
        reject(new Error(`timed out with ${events.length}/${count} events`));
      }, ms);
      waiters.push(check);
      check();
    });
  return { es, events, waitFor, opened, close: () => es.close() };
}
