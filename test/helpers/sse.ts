/**
 * The one SSE subscriber of the tests: a real client (the `eventsource` package) on a session's
 * event stream, collecting every event. Waits are event-driven; "nothing more arrived" is shown by
 * a marker sent after the thing that must not happen (`sendMarker`), since the stream keeps order.
 */
import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import { testApiKey, type Platform } from './platform.js';
import { eventually } from './eventually.js';

export interface Envelope {
  event_type: string;
  session_id: string;
  channel: string;
  data: Record<string, any>;
}

/** An envelope with the SSE id it came with (its sequence). */
export interface SessionEvent extends Envelope {
  id: number;
}

export interface Subscriber {
  events: SessionEvent[];
  /** Resolves once the stream is open; rejects if it could not be opened. */
  opened: Promise<void>;
  /** Resolves once `count` events arrived. */
  waitFor(count: number, ms?: number): Promise<SessionEvent[]>;
  /** Resolves with the first event that matches. */
  next(match: (e: SessionEvent) => boolean, ms?: number): Promise<SessionEvent>;
  /** Every event received up to and including `marker` (see `sendMarker`). */
  throughMarker(marker: string, ms?: number): Promise<SessionEvent[]>;
  close(): void;
}

export interface SubscribeOptions {
  apiKey?: string;
  scheme?: 'bearer' | 'x-api-key';
  lastEventId?: number;
}

export function subscribe(url: string, sessionId: string, channel: string, options: SubscribeOptions = {}): Subscriber {
  const { apiKey = testApiKey, scheme = 'x-api-key', lastEventId } = options;
  const events: SessionEvent[] = [];
  const auth: Record<string, string> = scheme === 'x-api-key' ? { 'X-API-Key': apiKey } : { Authorization: `Bearer ${apiKey}` };
  const es = new EventSource(`${url}/api/sessions/${sessionId}/events?channel=${channel}`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: <Record<string, string>>{
          ...init.headers,
          ...auth,
          // The client sends its own Last-Event-ID when it reconnects; the first connection resumes from ours.
          ...(lastEventId !== undefined && !init.headers['Last-Event-ID'] ? { 'Last-Event-ID': String(lastEventId) } : {}),
        },
      }),
  });
  let waiters: Array<() => void> = [];
  es.onmessage = (e) => {
    events.push({ id: Number(e.lastEventId), ...(JSON.parse(e.data) as Envelope) });
    waiters.forEach((w) => w());
  };
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => {
      if (es.readyState === es.CLOSED) reject(new Error(`SSE failed: ${(e as { message?: string }).message}`));
    };
  });
  const seen = () => JSON.stringify(events.map((e) => [e.event_type, e.channel, e.data.content ?? e.data.role ?? e.data.marker]).slice(-20));

  /** Resolves with `found()`'s first non-undefined value, re-checked on every event. */
  const when = <T>(found: () => T | undefined, what: string, ms: number) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === undefined) return;
        waiters = waiters.filter((w) => w !== check);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((w) => w !== check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what} on the ${channel} stream; last events: ${seen()}`));
      }, ms);
      waiters.push(check);
      check();
    });

  return {
    events,
    opened,
    waitFor: (count, ms = 10_000) => when(() => (events.length >= count ? events : undefined), `${count} events (got ${events.length})`, ms),
    next: (match, ms = 15_000) => when(() => events.find(match), 'a matching event', ms),
    throughMarker: (marker, ms = 15_000) =>
      when(() => {
        const at = events.findIndex((e) => e.data.marker === marker);
        return at < 0 ? undefined : events.slice(0, at + 1);
      }, `marker ${marker}`, ms),
    close: () => es.close(),
  };
}

/**
 * Publishes a marker (a TYPING event, which goes through the session's ordered lane like every
 * event) on `channel`, so a subscriber of another channel receives it after everything accepted
 * before it. Returns the marker to pass to `throughMarker`.
 */
export async function sendMarker(api: Platform, sessionId: string, channel = 'email'): Promise<string> {
  const marker = randomUUID();
  const res = await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'TYPING', channel, data: { is_typing: false, marker } } });
  if (res.status !== 200) throw new Error(`marker not accepted: ${res.status} ${await res.text()}`);
  return marker;
}

/** What a marker looks like in a list of events, to compare lists with `toEqual`. */
export const markerEvent = (marker: string) => ({ event_type: 'TYPING', data: { is_typing: false, marker } });

/**
 * A subscriber of any SSE stream (e.g. GET /api/v1/sre/events) with extra request headers (API key
 * or a signed-in person's Cookie), collecting each `data:` message as parsed JSON with the time it
 * arrived. Resolves once the stream is open.
 */
export async function subscribeUrl<T>(url: string, headers: Record<string, string>, describe: (e: T) => unknown = (e) => e) {
  const events: T[] = [];
  /** Date.now() at which each of `events` arrived. */
  const received: number[] = [];
  let arrived: () => void = () => {};
  const es = new EventSource(url, { fetch: (input, init) => fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } }) });
  es.onmessage = (e) => {
    events.push(JSON.parse(e.data) as T);
    received.push(Date.now());
    arrived();
  };
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`SSE failed: ${(e as { message?: string }).message}`));
  });
  return {
    events,
    received,
    /** Resolves with the first message that matches (re-checked as each arrives). */
    async next(match: (e: T) => boolean, ms = 15_000): Promise<T> {
      const deadline = Date.now() + ms;
      for (let found = events.find(match); ; found = events.find(match)) {
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events.map(describe))}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          arrived = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
    close: () => es.close(),
  };
}

/**
 * Opens a session's SSE stream with plain fetch (no reconnection, unlike `subscribe`), to see the
 * server end it; resolves once it is subscribed (its first bytes, `retry:`, are written after the
 * subscription). `ended` resolves true when the server ends the response.
 */
export async function openRawStream(api: Platform, sessionId: string, channel: string, lastEventId?: number) {
  const res = await fetch(`${api.url}/api/sessions/${sessionId}/events?channel=${channel}`, {
    headers: { 'X-API-Key': testApiKey, ...(lastEventId !== undefined ? { 'Last-Event-ID': String(lastEventId) } : {}) },
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) return { status: res.status, text: () => '', ended: Promise.resolve(false) };
  const reader = res.body!.getReader();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return true;
      text += new TextDecoder().decode(chunk.value);
    }
  })();
  await eventually(() => text.includes('retry:'));
  return { status: 200, text: () => text, ended };
}

/** The SSE blocks of a raw stream's text: each one's id and parsed data (null when absent). */
export const parseFrames = (text: string) =>
  text.split('\n\n').filter((b) => /^(id|data):/m.test(b)).map((block) => ({
    id: /^id: (\d+)/m.exec(block) ? Number(/^id: (\d+)/m.exec(block)![1]) : null,
    data: /^data: (.*)$/m.exec(block) ? JSON.parse(/^data: (.*)$/m.exec(block)![1]!) : null,
  }));
