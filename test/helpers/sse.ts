/** SSE subscribers (the `eventsource` package) collecting parsed `data:` messages: of a session's event stream, or of any stream URL. */
import { EventSource } from 'eventsource';
import { testApiKey } from './platform.js';

export interface Envelope {
  event_type: string;
  session_id: string;
  channel: string;
  data: Record<string, any>;
}

/** Opens an SSE stream at `url` with extra request headers (API key, Cookie); resolves once it is open. */
export async function subscribeUrl<T>(url: string, headers: Record<string, string>, describe: (e: T) => unknown = (e) => e) {
  const events: T[] = [];
  const received: number[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  source.addEventListener('message', (e) => {
    events.push(JSON.parse(e.data) as T);
    received.push(Date.now());
  });
  await new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', (e) => reject(new Error(`SSE failed: ${String((e as { message?: string }).message)}`)), { once: true });
  });
  return {
    events,
    /** Date.now() at which each of `events` arrived. */
    received,
    /** Waits until a message matches. */
    async next(match: (e: T) => boolean, ms = 15_000): Promise<T> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching event; got ${JSON.stringify(events.map(describe))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () => source.close(),
  };
}

/** A session's event stream, as the test API key. */
export function subscribe(baseUrl: string, sessionId: string, channel: string) {
  return subscribeUrl<Envelope>(`${baseUrl}/api/sessions/${sessionId}/events?channel=${channel}`, { 'X-API-Key': testApiKey }, (e) => [e.event_type, e.channel, e.data.role]);
}
