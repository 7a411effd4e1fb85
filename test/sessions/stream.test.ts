import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { db } from '../../shared/db/index.js';
import { endAllStreams } from '../../api/stream/sse.js';
import { slowSubscriberBytes } from '../../api/stream/session-stream.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { getContext } from '../../shared/sessions/context.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json, newInteraction, newSession, publish } from './helpers.js';
import { markerEvent, sendMarker, subscribe, type Subscriber } from '../helpers/sse.js';

let api: Platform;
const open: Subscriber[] = [];
const sub = (...args: Parameters<typeof subscribe>) => {
  const s = subscribe(...args);
  open.push(s);
  return s;
};
beforeAll(async () => {
  process.env.SESSION_SSE_KEEPALIVE_SECONDS = '1';
  // 1,000 concurrent messages on one session queue up in its lane; let the POSTs wait for them.
  process.env.SESSION_PUBLISH_WAIT_MS = '30000';
  api = await startPlatform();
});
afterAll(() => open.forEach((s) => s.close()));

const key = { apiKey: testApiKey, scheme: 'bearer' as const };
const say = (sessionId: string, channel: string, interactionId: string, content: string, role = 'user') =>
  publish(api, sessionId, { channel, role, content, interaction_id: interactionId }).then((r) => json(r, 200));

describe('the session event stream (SSE)', () => {
  it('delivers each event as id + one data line holding the envelope, with anti-buffering headers and no compression', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const controller = new AbortController();
    const res = await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=voice`, {
      headers: { Authorization: `Bearer ${testApiKey}`, 'Accept-Encoding': 'gzip, br' },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('cache-control')).toMatch(/no-cache/);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('content-encoding') ?? 'identity').toBe('identity');
    const published = await say(sessionId, 'chat', chat, 'hi voice');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('data:')) text += new TextDecoder().decode((await reader.read()).value);
    while (!text.endsWith('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const frame = text.split('\n\n').find((f) => f.includes('data:'))!;
    const lines = frame.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`id: ${published.sequence}`);
    const envelope = JSON.parse(lines[1]!.slice('data: '.length));
    expect(Object.keys(envelope).sort()).toEqual(['channel', 'data', 'event_type', 'session_id']);
    expect(envelope).toMatchObject({ event_type: 'MESSAGE', session_id: sessionId, channel: 'chat', data: { role: 'user', content: 'hi voice', interaction_id: chat, metadata: {} } });
  });

  it('a subscriber never receives events of its own channel', async () => {
    const { sessionId } = await newSession(api);
    const [chat, voice] = [await newInteraction(api, sessionId, 'chat'), await newInteraction(api, sessionId, 'voice')];
    const chatSub = sub(api.url, sessionId, 'chat', key);
    const voiceSub = sub(api.url, sessionId, 'voice', { ...key, scheme: 'x-api-key' });
    await Promise.all([chatSub.opened, voiceSub.opened]);
    await say(sessionId, 'chat', chat, 'from chat');
    await say(sessionId, 'voice', voice, 'from voice', 'assistant');
    await say(sessionId, 'chat', chat, 'chat again');
    // Anything wrongly delivered would arrive before the marker, which follows the three messages.
    const marker = await sendMarker(api, sessionId, 'sms');
    const voiceGot = await voiceSub.throughMarker(marker);
    const chatGot = await chatSub.throughMarker(marker);
    expect(voiceGot.map((e) => [e.channel, e.data.content])).toEqual([['chat', 'from chat'], ['chat', 'chat again'], ['sms', undefined]]);
    expect(chatGot.map((e) => [e.channel, e.data.content])).toEqual([['voice', 'from voice'], ['sms', undefined]]);
  });

  it('sends a keep-alive comment every SESSION_SSE_KEEPALIVE_SECONDS', async () => {
    const { sessionId } = await newSession(api);
    const controller = new AbortController();
    const res = await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=sms`, { headers: { 'X-API-Key': testApiKey }, signal: controller.signal });
    const reader = res.body!.getReader();
    const started = Date.now();
    let text = '';
    while ((text.match(/: keep-alive/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    expect(elapsed).toBeLessThan(4000);
  });

  it('needs the API key (bearer or X-API-Key), a known channel and a known session', async () => {
    const { sessionId } = await newSession(api);
    expect((await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=chat`)).status).toBe(401);
    expect((await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=Fax!`, { headers: { 'X-API-Key': testApiKey } })).status).toBe(400);
    expect((await fetch(`${api.url}/api/sessions/${sessionId}/events`, { headers: { 'X-API-Key': testApiKey } })).status).toBe(400);
    expect((await fetch(`${api.url}/api/sessions/7d444840-9dc0-11d1-b245-5ffdce74fad2/events?channel=chat`, { headers: { 'X-API-Key': testApiKey } })).status).toBe(404);
  });

  it('CHANNEL_JOINED and CHANNEL_LEFT reach the other channels', async () => {
    const { sessionId } = await newSession(api);
    const watcher = sub(api.url, sessionId, 'voice', key);
    await watcher.opened;
    const sms = await newInteraction(api, sessionId, 'sms', 'SM123');
    await json(await api.request(`/api/sessions/interactions/${sms}/close`, { method: 'POST', json: {} }), 200);
    const got = await watcher.waitFor(2);
    expect(got.map((e) => [e.event_type, e.channel, e.data])).toEqual([
      ['CHANNEL_JOINED', 'sms', { interaction_id: sms, channel_ref: 'SM123' }],
      ['CHANNEL_LEFT', 'sms', { interaction_id: sms }],
    ]);
  });

  it('a client resuming with Last-Event-ID gets every missed event from Postgres, then live ones, without gap or duplicate', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const first = await say(sessionId, 'chat', chat, 'm0');
    for (let i = 1; i < 5; i++) await say(sessionId, 'chat', chat, `m${i}`);
    const resumed = sub(api.url, sessionId, 'voice', { ...key, lastEventId: first.sequence });
    await resumed.opened;
    for (let i = 5; i < 8; i++) await say(sessionId, 'chat', chat, `m${i}`);
    const marker = await sendMarker(api, sessionId);
    const got = await resumed.throughMarker(marker);
    expect(got.map((e) => e.data.content ?? e.data)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', markerEvent(marker).data]);
    const ids = got.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('a stream cut while messages keep flowing reconnects and ends with every message exactly once, in order', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const watcher = sub(api.url, sessionId, 'voice', key);
    await watcher.opened;
    const total = 60;
    const sending = (async () => {
      for (let i = 0; i < total; i++) {
        await say(sessionId, 'chat', chat, `n${i}`);
        if (i === 20 || i === 40) endAllStreams(); // the server ends every stream, as on shutdown
      }
    })();
    await sending;
    const marker = await sendMarker(api, sessionId);
    const got = await watcher.throughMarker(marker);
    expect(got.map((e) => e.data.content ?? e.data)).toEqual([...Array.from({ length: total }, (_, i) => `n${i}`), markerEvent(marker).data]);
  });

  it('the process holds one Redis subscriber connection however many clients listen', async () => {
    const sessions = await Promise.all(Array.from({ length: 5 }, () => newSession(api)));
    const subs = sessions.flatMap(({ sessionId }) => ['chat', 'voice', 'sms'].map((c) => sub(api.url, sessionId, c, key)));
    await Promise.all(subs.map((s) => s.opened));
    const redis = new Redis({ host: '127.0.0.1', port: Number(process.env.BUS_PORT ?? 6379) });
    const list = await redis.client('LIST');
    redis.disconnect();
    const mine = String(list).split('\n').filter((line) => line.includes(`name=switchboard:bus-sub:${process.pid} `));
    expect(mine).toHaveLength(1);
    subs.forEach((s) => s.close());
  });

  it('a subscriber too slow to keep up is disconnected instead of buffered without bound', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const cutOff = async () => Number((await metricsRegistry.getSingleMetric('switchboard_session_sse_slow_disconnects_total')!.get()).values[0]?.value ?? 0);
    const before = await cutOff();
    // A raw client that never reads: the kernel buffers fill, then the server's, until the server gives up on it.
    const http = await import('node:http');
    await new Promise((connected) =>
      http.get(`${api.url}/api/sessions/${sessionId}/events?channel=voice`, { headers: { 'X-API-Key': testApiKey } }, (res) => connected(res.pause())).on('error', () => undefined),
    );
    const big = 'x'.repeat(30_000);
    let sent = 0;
    while ((await cutOff()) === before && sent < 600) {
      await Promise.all(Array.from({ length: 20 }, () => say(sessionId, 'chat', chat, big)));
      sent += 20;
    }
    expect(await cutOff()).toBe(before + 1);
    // Far less than what was sent stayed buffered: the connection was dropped at the limit.
    expect(sent * 30_000).toBeGreaterThan(slowSubscriberBytes);
  });

  it('4 channels × 250 concurrent messages: history holds the last 50 in acceptance order, 1,000 audit rows, every subscriber gets exactly the 750 events of the other channels', async () => {
    const { sessionId } = await newSession(api);
    const channelNames = ['voice', 'chat', 'sms', 'slack'];
    const interactions = Object.fromEntries(await Promise.all(channelNames.map(async (c) => [c, await newInteraction(api, sessionId, c)] as const)));
    const watchers = Object.fromEntries(channelNames.map((c) => [c, sub(api.url, sessionId, c, key)]));
    await Promise.all(Object.values(watchers).map((w) => w.opened));
    // Joins were published before the subscriptions: the streams start after them.
    const results = await Promise.all(
      channelNames.map(async (c) => {
        const mine: Array<{ content: string; sequence: number }> = [];
        let next = 0;
        // 25 requests in flight per channel (100 at once): concurrent, without overrunning the listen backlog.
        await Promise.all(
          Array.from({ length: 25 }, async () => {
            while (next < 250) {
              const content = `${c}-${next++}`;
              const body = await json(await publish(api, sessionId, { channel: c, role: 'user', content, interaction_id: interactions[c] }), 200);
              mine.push({ content, sequence: body.sequence });
            }
          }),
        );
        return mine;
      }),
    );
    const all = results.flat().sort((a, b) => a.sequence - b.sequence);
    expect(new Set(all.map((m) => m.sequence)).size).toBe(1000);
    const history = (await getContext(sessionId)).conversation_history;
    expect(history.map((m) => m.content)).toEqual(all.slice(-50).map((m) => m.content));
    const audit = await db()('session_events').where({ session_id: sessionId, event_type: 'message_published' }).count('* as n').first();
    expect(Number(audit!.n)).toBe(1000);
    // No subscriber listens on email: the marker reaches all four after the 1,000 messages.
    const marker = await sendMarker(api, sessionId, 'email');
    for (const c of channelNames) {
      const got = (await watchers[c]!.throughMarker(marker, 20_000)).slice(0, -1);
      expect(got).toHaveLength(750);
      expect(got.every((e) => e.channel !== c)).toBe(true);
      expect(new Set(got.map((e) => e.data.message_id)).size).toBe(750);
      // Delivered in acceptance (sequence) order.
      expect(got.map((e) => e.id)).toEqual(all.filter((m) => !m.content.startsWith(`${c}-`)).map((m) => m.sequence));
    }
  }, 60_000);
});
