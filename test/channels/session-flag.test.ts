/**
 * SERVICE_SESSION_SYSTEM=false switches the session system off for every channel, not only for the
 * session endpoints: the webhooks answer 503, the email listener refuses mail for now (451, nothing
 * recorded), a call hangs up without opening a session, and agent_delegate opens no session (503).
 * On the old main the email role and agent_delegate created sessions with the flag off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { randomBytes } from 'node:crypto';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { freshPhone } from '../helpers/chatapp.js';
import { eventually } from '../helpers/eventually.js';
import { createUser } from '../../shared/users/users.store.js';
import { startEmailListener } from '../../shared/channels/email/listener.js';
import { VoiceCall } from '../../shared/channels/voice/call.js';
import type { RelayOutbound } from '../../shared/channels/voice/relay-messages.js';
import { SESSIONS } from '../../shared/sessions/sessions.store.js';
import { db } from '../../shared/db/index.js';

process.env.SERVICE_SESSION_SYSTEM = 'false';
process.env.EMAIL_ADDRESS = 'assistant@switchboard.test';

let api: Platform;
let listener: { port: number; close: () => Promise<void> };
beforeAll(async () => {
  api = await startPlatform();
  listener = await startEmailListener({ port: 0, host: '127.0.0.1' });
});
afterAll(() => listener?.close());

const rows = async (table: string, where: Record<string, string>) => db()(table).where(where).count<{ count: string }[]>('* as count').then((r) => Number(r[0]!.count));
const sessionsOf = (userId: string) => rows(SESSIONS, { user_id: userId });

describe('SERVICE_SESSION_SYSTEM=false', () => {
  it('every channel webhook answers 503 naming the flag, before the signature is checked', async () => {
    for (const path of ['/sms/webhook', '/slack/events', '/slack/interactions', '/voice/incoming', '/chatapp/webhook']) {
      const res = await fetch(`${api.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'MessageSid=SM1' });
      expect(res.status, path).toBe(503);
      expect((await res.json()).detail, path).toMatch(/SERVICE_SESSION_SYSTEM=false/);
    }
  });

  it('the email listener refuses mail for now (451): nothing is recorded, no session is opened', async () => {
    const user = await createUser({ phone_number: freshPhone(), email: `${randomBytes(4).toString('hex')}@example.com` });
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
    const sent = mailer.sendMail({ from: user.email!, to: 'assistant@switchboard.test', subject: 'Hello', text: 'Anyone there?' });
    await expect(sent).rejects.toMatchObject({ responseCode: 451 });
    expect(await rows('channel_messages', { remote_address: user.email! })).toBe(0);
    expect(await sessionsOf(user.user_id)).toBe(0);
  });

  it('a call is ended at its setup without a session', async () => {
    const user = await createUser({ phone_number: freshPhone() });
    const sent: RelayOutbound[] = [];
    const call = new VoiceCall((m) => sent.push(m));
    call.receive(JSON.stringify({ type: 'setup', sessionId: 'VX1', callSid: `CA${randomBytes(8).toString('hex')}`, from: user.phone_number, to: '+15005550006' }));
    await eventually(async () => sent.find((m) => m.type === 'end'), 5000, 'the hang-up');
    await call.end();
    expect(await sessionsOf(user.user_id)).toBe(0);
  });

  it('agent_delegate answers 503 and opens no session', async () => {
    const user = await createUser({ phone_number: freshPhone() });
    const res = await api.request('/api/v1/tools/agent_delegate/execute', { method: 'POST', json: { task: 'note the outage', user_id: user.user_id, wait_seconds: 0 } });
    expect(res.status, await res.clone().text()).toBe(503);
    expect(JSON.stringify(await res.json())).toMatch(/SERVICE_SESSION_SYSTEM=false/);
    expect(await sessionsOf(user.user_id)).toBe(0);
  });
});
