/**
 * The stream scales with worker processes (shared/stream/index.ts): with three worker processes
 * and two API processes, different sessions are written by different processes at the same time,
 * each session keeps the order its messages were sent in, and when a worker is killed its lanes
 * are taken over within seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { db } from '../../shared/db/index.js';
import { subscribeSession } from '../../shared/bus.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { eventually } from '../helpers/eventually.js';
import { newInteraction, newSession } from '../sessions/helpers.js';

const WORKERS = 3;
const SESSIONS = 24;
const PER_SESSION = 40;

let api: Platform;
let otherApiUrl: string;
const children: ChildProcess[] = [];

/** Starts a role as its own process (application_name `name` on its Postgres connections); resolves with the line matching `ready`. */
function startRole(entry: string, name: string, ready: RegExp): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: testApiKey, WORKER_METRICS_PORT: '0', PGAPPNAME: name },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 90_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (ready.test(line)) {
        clearTimeout(timer);
        resolve({ child, line });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

beforeAll(async () => {
  process.env.SESSION_PUBLISH_WAIT_MS = '0';
  // A fleet's setting: lanes for the worker processes to share (the default of one suits one machine).
  process.env.STREAM_LANES = '8';
  process.env.API_KEYS = testApiKey;
  // Which process wrote each message, and when: recorded by the database of this file alone.
  await db().raw(`create table test_writes (message_id uuid, session_id uuid, app text, at timestamptz default clock_timestamp());
    create function test_record_write() returns trigger language plpgsql as $$
      begin insert into test_writes (message_id, session_id, app) values (new.message_id, new.session_id, current_setting('application_name')); return new; end $$;
    create trigger test_record_write after insert on session_messages for each row execute function test_record_write();`);
  api = await startPlatform({ workers: false });
  const started = await Promise.all([
    ...Array.from({ length: WORKERS }, (_, i) => startRole('workers/main.ts', `worker-${i}`, /workers running/)),
    startRole('api/main.ts', 'api-2', /API listening/),
  ]);
  otherApiUrl = /"url":"([^"]+)"/.exec(started[WORKERS]!.line)![1]!;
}, 120_000);
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
});

describe('the stream across processes', () => {
  it('three workers write different sessions at the same time, order holds across two APIs, and a killed worker is taken over within 5 s', async () => {
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const { sessionId } = await newSession(api);
        return { sessionId, chat: await newInteraction(api, sessionId, 'chat') };
      }),
    );
    /** Publication time of each message (by content) seen on the bus. */
    const arrivedAt = new Map<string, number>();
    const leave = await Promise.all(sessions.map((s) => subscribeSession(s.sessionId, (e) => void (e.event_type === 'MESSAGE' && !arrivedAt.has(String(e.data.content)) && arrivedAt.set(String(e.data.content), Date.now())))));
    const sentAt = new Map<string, number>();
    let killedAt = 0;
    let sent = 0;

    // Each session sends its messages one after the other, alternating between the two API processes.
    await Promise.all(
      sessions.map(async (s, si) => {
        for (let i = 0; i < PER_SESSION; i++) {
          const content = `s${si}-m${i}`;
          const base = i % 2 ? otherApiUrl : api.url;
          sentAt.set(content, Date.now());
          const res = await fetch(`${base}/api/sessions/${s.sessionId}/messages`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-API-Key': testApiKey },
            body: JSON.stringify({ channel: 'chat', role: 'user', content, interaction_id: s.chat }),
          });
          expect(res.status).toBe(202);
          await res.arrayBuffer();
          // Half way through, the first worker dies without a word (its active jobs stall).
          if (++sent === (SESSIONS * PER_SESSION) / 2) {
            children[0]!.kill('SIGKILL');
            killedAt = Date.now();
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      }),
    );
    await eventually(() => arrivedAt.size === SESSIONS * PER_SESSION, 30_000, 'every message published');
    for (const l of leave) l();

    // Order: each session's audit log, by sequence, is the order its messages were sent in.
    for (const [si, s] of sessions.entries()) {
      const audit = await db()('session_events').where({ session_id: s.sessionId, event_type: 'message_published' }).orderBy('sequence').select('sequence', 'payload');
      expect(audit.map((r) => r.payload.data.content)).toEqual(Array.from({ length: PER_SESSION }, (_, i) => `s${si}-m${i}`));
      expect(audit.map((r) => Number(r.sequence))).toEqual(Array.from({ length: PER_SESSION }, (_, i) => i + 2));
    }

    // Every worker process wrote messages, and in many tenths of a second two or more of them wrote at once.
    const writes = await db()('test_writes').select('app', db().raw('extract(epoch from at) * 1000 as ms'));
    const apps = new Set(writes.map((w) => w.app));
    expect([...apps].sort()).toEqual(Array.from({ length: WORKERS }, (_, i) => `worker-${i}`));
    const byTenth = new Map<number, Set<string>>();
    for (const w of writes) {
      const tenth = Math.floor(Number(w.ms) / 100);
      byTenth.set(tenth, (byTenth.get(tenth) ?? new Set()).add(w.app));
    }
    const shared = [...byTenth.values()].filter((set) => set.size >= 2).length;
    expect(shared, `tenths of a second in which two or more workers wrote, of ${byTenth.size}`).toBeGreaterThan(5);

    // The killed worker's lanes: every message sent after the kill was published within 5 s.
    const afterKill = [...sentAt].filter(([, at]) => at >= killedAt).map(([content, at]) => arrivedAt.get(content)! - at);
    expect(afterKill.length).toBeGreaterThan(100);
    expect(Math.max(...afterKill), 'longest wait of a message sent after the kill').toBeLessThan(5_000);
  }, 180_000);
});
