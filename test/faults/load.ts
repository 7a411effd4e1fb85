/**
 * The fault suite's clients: sessions posting messages one after another (each POST timed), SSE
 * subscribers that reconnect with Last-Event-ID as a browser's EventSource does, and an alert sender.
 * Everything they saw is recorded for the scenario's row.
 */
import { randomInt } from 'node:crypto';
import { sleep } from './infra.js';

/** A client gives up after this long (and counts it as a wait over the limit). */
const clientTimeoutMs = 10_000;

export interface Attempt {
  at: number;
  ms: number;
  status: number; // 0 = no answer (timeout or connection error)
  kind: 'message' | 'alert';
}

export interface SentMessage {
  session: number;
  content: string;
  acceptedAt: number;
  messageId: string;
}

export interface Delivery {
  sequence: number;
  messageId: string;
  at: number;
}

export class Recorder {
  attempts: Attempt[] = [];
  messages: SentMessage[] = [];
  alerts: string[] = [];
  sseStatuses: number[] = [];
}

export class Api {
  constructor(readonly base: string, readonly apiKey: string) {}
  async request(path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; ms: number }> {
    const started = Date.now();
    try {
      const res = await fetch(this.base + path, {
        method: init.method ?? 'GET',
        headers: { 'X-API-Key': this.apiKey, ...(init.json ? { 'Content-Type': 'application/json' } : {}), ...init.headers },
        body: init.json ? JSON.stringify(init.json) : undefined,
        signal: AbortSignal.timeout(clientTimeoutMs),
      });
      const text = await res.text();
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      return { status: res.status, body, ms: Date.now() - started };
    } catch {
      return { status: 0, body: undefined, ms: Date.now() - started };
    }
  }
}

/** One SSE subscriber: reconnects 500 ms after any end with the last id it saw. */
export class Subscriber {
  deliveries: Delivery[] = [];
  private lastId = 0;
  private abort = new AbortController();
  private stopped = false;
  constructor(private readonly api: Api, readonly sessionId: string, readonly channel: string, private readonly rec: Recorder) {}

  start(): Promise<void> {
    let first: () => void = () => undefined;
    const opened = new Promise<void>((r) => (first = r));
    void (async () => {
      while (!this.stopped) {
        try {
          const res = await fetch(`${this.api.base}/api/sessions/${this.sessionId}/events?channel=${this.channel}`, {
            headers: { 'X-API-Key': this.api.apiKey, 'Last-Event-ID': String(this.lastId) },
            signal: this.abort.signal,
          });
          this.rec.sseStatuses.push(res.status);
          if (res.status !== 200 || !res.body) {
            await res.body?.cancel();
          } else {
            first();
            await this.read(res.body);
          }
        } catch {
          if (!this.stopped) this.rec.sseStatuses.push(0);
        }
        if (!this.stopped) await sleep(500);
      }
    })();
    return opened;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: number | undefined;
        let data: string | undefined;
        for (const line of frame.split('\n')) {
          if (line.startsWith('id: ')) id = Number(line.slice(4));
          else if (line.startsWith('data: ')) data = line.slice(6);
        }
        if (id === undefined || data === undefined) continue;
        this.lastId = id;
        const envelope = JSON.parse(data) as { event_type: string; data: { message_id?: string } };
        if (envelope.event_type === 'MESSAGE' && envelope.data.message_id) this.deliveries.push({ sequence: id, messageId: envelope.data.message_id, at: Date.now() });
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }
}

export interface LoadSession {
  index: number;
  sessionId: string;
  interactionId: string;
  subscribers: Subscriber[];
}

/** Creates a user, its session, a chat interaction and two subscribers (voice, sms) listening from the start. */
export async function openSession(api: Api, index: number, rec: Recorder): Promise<LoadSession> {
  const must = (r: { status: number; body: any }, status: number) => {
    if (r.status !== status) throw new Error(`setup request failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const user = must(await api.request('/api/users', { method: 'POST', json: { phone_number: `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`, display_name: `fault ${index}` } }), 201);
  const session = must(await api.request('/api/sessions/resolve', { method: 'POST', json: { user_id: user.user_id } }), 200);
  const interaction = must(await api.request(`/api/sessions/${session.session_id}/interactions`, { method: 'POST', json: { channel: 'chat' } }), 201);
  const subscribers = ['voice', 'sms'].map((ch) => new Subscriber(api, session.session_id, ch, rec));
  await Promise.all(subscribers.map((s) => s.start()));
  return { index, sessionId: session.session_id, interactionId: interaction.interaction_id, subscribers };
}

/** Drives the sessions and the alert sender until `stop()`; every session posts its next message once the last one was answered. */
export function drive(api: Api, sessions: LoadSession[], rec: Recorder, alertToken: string, gapMs = 150) {
  let running = true;
  let n = 0;
  const loops = sessions.map(async (s) => {
    while (running) {
      const content = `m${++n}-s${s.index}`;
      const r = await api.request(`/api/sessions/${s.sessionId}/messages`, { method: 'POST', json: { channel: 'chat', role: 'user', content, interaction_id: s.interactionId } });
      rec.attempts.push({ at: Date.now() - r.ms, ms: r.ms, status: r.status, kind: 'message' });
      if (r.status === 200 || r.status === 202) rec.messages.push({ session: s.index, content, acceptedAt: Date.now(), messageId: r.body.message_id });
      await sleep(r.status === 200 || r.status === 202 ? gapMs : 250);
    }
  });
  const alerts = (async () => {
    let a = 0;
    while (running) {
      const payload = { version: '4', status: 'firing', receiver: 'faults', alerts: [{ status: 'firing', labels: { alertname: `FaultSuite${++a}`, instance: 'suite' }, annotations: {} }] };
      const r = await api.request('/webhooks/alertmanager/default', { method: 'POST', json: payload, headers: { Authorization: `Bearer ${alertToken}` } });
      rec.attempts.push({ at: Date.now() - r.ms, ms: r.ms, status: r.status, kind: 'alert' });
      if (r.status === 202) rec.alerts.push(r.body.payload_id);
      await sleep(400);
    }
  })();
  return async () => {
    running = false;
    await Promise.all([...loops, alerts]);
  };
}
