import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json, newInteraction, newSession, publish } from './helpers.js';
import { subscribe } from '../helpers/sse.js';

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
});
