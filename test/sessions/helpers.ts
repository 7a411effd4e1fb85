/** Helpers of the session memory tests: users, sessions and interactions through the HTTP API. */
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
