import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json, newInteraction, newSession, publish } from './helpers.js';
import { subscribe } from '../helpers/sse.js';
import { metricPrefix, metricsRegistry } from '../../shared/metrics.js';

let api: Platform;
let other: ChildProcess;
let otherUrl: string;

beforeAll(async () => {
  api = await startPlatform();
  // A second API process (web role only) on the same database, queues and bus.
  other = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: testApiKey },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  otherUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('second API did not start')), 30_000);
    createInterface({ input: other.stdout! }).on('line', (line) => {
      const url = /"url":"([^"]+)"/.exec(line)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    other.on('exit', (code) => reject(new Error(`second API exited with ${code}`)));
  });
});
afterAll(() => {
  other?.kill('SIGTERM');
});

describe('across API processes', () => {
  it('an event published through one API process reaches subscribers connected to another', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const remote = subscribe(otherUrl, sessionId, 'voice', { apiKey: testApiKey });
    const local = subscribe(api.url, sessionId, 'sms', { apiKey: testApiKey });
    try {
      await Promise.all([remote.opened, local.opened]);
      const viaLocal = await json(await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'via this process', interaction_id: chat }), 200);
      const viaRemote = await fetch(`${otherUrl}/api/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': testApiKey },
        body: JSON.stringify({ channel: 'chat', role: 'assistant', content: 'via the other process', interaction_id: chat }),
      });
      const remoteBody = await json(viaRemote, 200);
      for (const s of [remote, local]) {
        const got = await s.waitFor(2);
        expect(got.map((e) => [e.id, e.data.content])).toEqual([
          [viaLocal.sequence, 'via this process'],
          [remoteBody.sequence, 'via the other process'],
        ]);
      }
    } finally {
      remote.close();
      local.close();
    }
  });

  it('a session closed or erased through one API process is refused at once by another that had it cached', async () => {
    const postOther = (sessionId: string, interactionId: string, content: string) =>
      fetch(`${otherUrl}/api/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': testApiKey },
        body: JSON.stringify({ channel: 'chat', role: 'user', content, interaction_id: interactionId }),
      });
    const closing = await newSession(api);
    const erased = await newSession(api);
    const chats = [await newInteraction(api, closing.sessionId, 'chat'), await newInteraction(api, erased.sessionId, 'chat')];
    // The other process checks each session once and keeps the answer.
    await json(await postOther(closing.sessionId, chats[0]!, 'cached'), 200);
    await json(await postOther(erased.sessionId, chats[1]!, 'cached'), 200);
    // This file's worker (in this process) counts what a lane had to drop: a stale cache would let the
    // messages through to be dropped there, and then answered 409/404 from the lane's refusal.
    const dropped = async () => (await metricsRegistry.getSingleMetricAsString(`${metricPrefix}stream_events_dropped_total`)).split('\n').filter((l) => !l.startsWith('#')).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    const droppedBefore = await dropped();

    await json(await api.request(`/api/sessions/${closing.sessionId}/close`, { method: 'POST', json: {} }), 200);
    await json(await api.request(`/api/users/${erased.userId}`, { method: 'DELETE' }), 200);

    expect((await postOther(closing.sessionId, chats[0]!, 'after close')).status).toBe(409);
    expect((await postOther(erased.sessionId, chats[1]!, 'after erasure')).status).toBe(404);
    expect(await dropped()).toBe(droppedBefore);
  });
});
