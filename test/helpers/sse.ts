/** An SSE subscriber of a session's event stream (the `eventsource` package), collecting envelopes. */
import { EventSource } from 'eventsource';
import { testApiKey } from './platform.js';

export interface Envelope {
  event_type: string;
  session_id: string;
  channel: string;
  data: Record<string, any>;
}

export async function subscribe(baseUrl: string, sessionId: string, channel: string) {
  const events: Envelope[] = [];
  const source = new EventSource(`${baseUrl}/api/sessions/${sessionId}/events?channel=${channel}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-API-Key': testApiKey } }),
  });
  source.addEventListener('message', (e) => events.push(JSON.parse(e.data) as Envelope));
  await new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', (e) => reject(new Error(`SSE failed: ${String((e as { message?: string }).message)}`)), { once: true });
  });
  return {
    events,
    /** Waits until an envelope matches. */
    async next(match: (e: Envelope) => boolean, ms = 15_000): Promise<Envelope> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching event; got ${JSON.stringify(events.map((e) => [e.event_type, e.channel, e.data.role]))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => source.close(),
  };
}
