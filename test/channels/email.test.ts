/**
 * The email channel: a real SMTP exchange with the platform's listener (nodemailer → smtp-server on
 * loopback), the sender matched by address, the new text published without the quoted history, and
 * the reply delivered over SMTP to a local relay in the same thread (In-Reply-To, References), one
 * interaction per thread; one message stored and answered once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { randomBytes } from 'node:crypto';
import { startPlatform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSmtp } from '../helpers/local-smtp-server.js';
import { eventually } from '../helpers/eventually.js';
import { freshPhone } from '../helpers/chatapp.js';
import { createUser } from '../../shared/users/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { getContext } from '../../shared/sessions/context.js';
import { listInteractions } from '../../shared/sessions/sessions.store.js';
import { startEmailListener } from '../../shared/channels/email/listener.js';
import { stripQuoted } from '../../shared/channels/email/parse.js';
import { db } from '../../shared/db/index.js';

const relay = await startLocalSmtp();
process.env.EMAIL_ADDRESS = 'assistant@switchboard.test';
process.env.EMAIL_SMTP_URL = relay.url;
await useLocalLlm((req) => ({ content: `Mail answer to: ${req.body.messages.at(-1)!.content}` }));
afterAll(() => relay.close());

let listener: { port: number; close: () => Promise<void> };
beforeAll(async () => {
  await startPlatform();
  listener = await startEmailListener({ port: 0, host: '127.0.0.1' });
});
afterAll(() => listener.close());

/** A user's mail client, speaking SMTP to the listener. */
function mailer() {
  return nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
}
const mailUser = async () => createUser({ phone_number: freshPhone(), email: `${randomBytes(4).toString('hex')}@example.com` });
const deliveredTo = (address: string) => relay.delivered.filter((m) => m.envelope.to.includes(address));

describe('quoted history', () => {
  it('is stripped: "On … wrote:", "> " lines, Outlook\'s original message and the signature', () => {
    expect(stripQuoted('Thanks, Friday works.\n\nOn Tue, 3 Mar 2026 at 10:00, Assistant <a@b.c> wrote:\n> Shall we meet?\n')).toBe('Thanks, Friday works.');
    expect(stripQuoted('Yes.\n-----Original Message-----\nFrom: x')).toBe('Yes.');
    expect(stripQuoted('Fine.\n-- \nPat\nACME')).toBe('Fine.');
    expect(stripQuoted('First line\nsecond line')).toBe('First line\nsecond line');
  });
});

describe('an email to EMAIL_ADDRESS', () => {
  it('is answered over SMTP in the same thread; the thread is one email interaction; the text is published without the quote', async () => {
    const u = await mailUser();
    const first = await mailer().sendMail({ from: u.email!, to: 'assistant@switchboard.test', subject: 'Invoice question', text: 'Why was I charged twice?' });
    const reply = await eventually(async () => deliveredTo(u.email!)[0], 15_000, 'the reply');
    expect(reply.envelope.from).toBe('assistant@switchboard.test');
    expect(reply.parsed.subject).toBe('Re: Invoice question');
    expect(reply.parsed.inReplyTo).toBe(first.messageId);
    expect(reply.parsed.references).toBe(first.messageId);
    expect(reply.parsed.text?.trim()).toBe('Mail answer to: Why was I charged twice?');

    // The user answers the reply, quoting it: same thread, same interaction.
    await mailer().sendMail({
      from: u.email!,
      to: 'assistant@switchboard.test',
      subject: 'Re: Invoice question',
      inReplyTo: reply.parsed.messageId,
      references: [first.messageId, reply.parsed.messageId!],
      text: `It was on the 3rd.\n\nOn Tue, Mar 3, 2026, Assistant <assistant@switchboard.test> wrote:\n> Mail answer to: Why was I charged twice?\n`,
    });
    const second = await eventually(async () => deliveredTo(u.email!)[1], 15_000, 'the second reply');
    expect(second.parsed.inReplyTo).toBeDefined();
    expect(second.parsed.references).toEqual([first.messageId, reply.parsed.messageId, second.parsed.inReplyTo]);
    expect(second.parsed.text?.trim()).toBe('Mail answer to: It was on the 3rd.');

    const { session } = await resolveSession(u.user_id);
    const emails = (await listInteractions(session.session_id)).filter((i) => i.channel === 'email');
    expect(emails).toHaveLength(1);
    expect(emails[0]!.channel_ref).toBe(first.messageId);
    const history = await eventually(async () => {
      const h = (await getContext(session.session_id)).conversation_history;
      return h.length === 4 && h;
    });
    expect(history.map((m) => [m.channel, m.role, m.content])).toEqual([
      ['email', 'user', 'Why was I charged twice?'],
      ['email', 'assistant', 'Mail answer to: Why was I charged twice?'],
      ['email', 'user', 'It was on the 3rd.'],
      ['email', 'assistant', 'Mail answer to: It was on the 3rd.'],
    ]);
  });

  it('delivered twice with the same Message-ID (a relay retrying) is stored once and answered once', async () => {
    const u = await mailUser();
    const messageId = `<${randomBytes(8).toString('hex')}@example.com>`;
    const mail = { from: u.email!, to: 'assistant@switchboard.test', subject: 'Once', text: 'only once', messageId };
    await mailer().sendMail(mail);
    await mailer().sendMail(mail);
    await eventually(async () => deliveredTo(u.email!)[0], 15_000, 'the reply');
    await mailer().sendMail({ ...mail, messageId: `<${randomBytes(8).toString('hex')}@example.com>`, text: 'marker' });
    await eventually(async () => deliveredTo(u.email!).length >= 2, 15_000, 'the marker reply');
    expect(deliveredTo(u.email!).map((m) => m.parsed.text?.trim())).toEqual(['Mail answer to: only once', 'Mail answer to: marker']);
    expect(await db()('channel_messages').where({ channel: 'email', direction: 'inbound', provider_message_id: messageId })).toHaveLength(1);
  });

  it('a reply the relay refuses for now (451) is retried and delivered once, with the same Message-ID', async () => {
    const u = await mailUser();
    relay.failNext(451);
    await mailer().sendMail({ from: u.email!, to: 'assistant@switchboard.test', subject: 'Retry', text: 'please retry' });
    const reply = await eventually(async () => deliveredTo(u.email!)[0], 20_000, 'the reply after the retry');
    const row = await eventually(async () => {
      const r = await db()('channel_messages').where({ channel: 'email', direction: 'outbound', remote_address: u.email }).first();
      return r?.status === 'sent' && r;
    });
    expect(row).toMatchObject({ attempts: 2, provider_message_id: reply.parsed.messageId });
    expect(deliveredTo(u.email!)).toHaveLength(1);
  });

  it('from an unknown sender is recorded and not answered (no backscatter)', async () => {
    const sent = await mailer().sendMail({ from: 'stranger@example.org', to: 'assistant@switchboard.test', subject: 'hi', text: 'hello?' });
    const row = await eventually(async () => {
      const r = await db()('channel_messages').where({ channel: 'email', provider_message_id: sent.messageId }).first();
      return r?.status === 'processed' && r;
    });
    expect(row.user_id).toBeNull();
    expect(await db()('channel_messages').where({ reply_to: row.message_id })).toHaveLength(0);
  });

  it('to another address is refused in the SMTP exchange (550) and not stored', async () => {
    const u = await mailUser();
    await expect(mailer().sendMail({ from: u.email!, to: 'someone-else@switchboard.test', subject: 'x', text: 'y' })).rejects.toMatchObject({ responseCode: 550 });
  });
});

