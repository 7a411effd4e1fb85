/**
 * Email proves the sender (issue 39, point 1): only the top-most Authentication-Results of exactly the
 * configured authserv-id counts, with dmarc=pass or dkim=pass aligned with From:; only listed relays may
 * connect; in production the email role does not start without both settings. Each of the issue's five
 * forgeries of an SRE's mail is refused in the SMTP exchange, recorded with its reason, and never reaches
 * the model or its tools; the genuine mail does.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aligned, parseAuthenticationResults, senderVerdict } from '../../shared/channels/email/sender-auth.js';
import { NOT_AUTHENTICATED, startEmailListener } from '../../shared/channels/email/listener.js';
import { db } from '../../shared/db/index.js';
import { eventually } from '../helpers/eventually.js';
import { queuesIdle } from '../helpers/queues.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSmtp } from '../helpers/local-smtp-server.js';
import { userWithRoles } from '../helpers/people.js';
import { startPlatform } from '../helpers/platform.js';

const MX = 'mx.corp.example';
const relay = await startLocalSmtp();
process.env.EMAIL_ADDRESS = 'assistant@switchboard.test';
process.env.EMAIL_SMTP_URL = relay.url;
process.env.EMAIL_TRUSTED_AUTHSERV_ID = MX;
process.env.EMAIL_RELAYS = '127.0.0.1, 10.9.0.0/16';
afterAll(() => relay.close());

// A model that does what the mail asks with the SRE's rights: "create lead <Name>" creates that lead.
const llm = await useLocalLlm((req) => {
  const last = req.body.messages.at(-1)!;
  if (last.role === 'tool') return { content: 'Lead created.' };
  const name = /create lead (\w+)/i.exec(last.content ?? '')?.[1] ?? 'Nobody';
  return { tool_calls: [{ id: 'call_lead', name: 'crm_create_lead', arguments: JSON.stringify({ first_name: 'Mail', last_name: name }) }] };
});

let listener: { port: number; close: () => Promise<void> };
beforeAll(async () => {
  await startPlatform();
  listener = await startEmailListener({ port: 0, host: '127.0.0.1' });
  const sre = await userWithRoles(['sre']);
  await db()('users').where({ user_id: sre.user_id }).update({ email: 'pat@corp.example' });
});
afterAll(() => listener.close());

/** A raw message as the MX hands it on: its Authentication-Results on top, in the order given. */
function message(subject: string, authResults: string[], from = 'Pat <pat@corp.example>', body = `Please create lead ${subject}.`) {
  const messageId = `<${randomBytes(8).toString('hex')}@corp.example>`;
  const raw = [
    ...authResults.map((a) => `Authentication-Results: ${a}`),
    `From: ${from}`,
    'To: assistant@switchboard.test',
    `Subject: ${subject}`,
    `Message-ID: ${messageId}`,
    `Date: ${new Date().toUTCString()}`,
    '',
    body,
    '',
  ].join('\r\n');
  return { messageId, raw };
}

/** Delivers as the relay at `localAddress` would (envelope sender `mailFrom`); resolves with the SMTP answer. */
async function deliver(raw: string, mailFrom = 'pat@corp.example', localAddress = '127.0.0.1'): Promise<{ code: number; text: string }> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true, localAddress });
  try {
    const info = await transport.sendMail({ envelope: { from: mailFrom, to: 'assistant@switchboard.test' }, raw });
    return { code: 250, text: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { code: e.responseCode ?? 0, text: e.response ?? e.message };
  }
}

const leadsNamed = (name: string) => db()('crm_leads').where({ last_name: name });
const modelSaw = (text: string) => llm.requests.some((r) => r.body.messages.some((m) => m.content?.includes(text)));

describe('Authentication-Results (RFC 8601)', () => {
  it('parses methods, properties, versions and quoted values, and drops comments, nested ones too', () => {
    expect(parseAuthenticationResults('mx.corp.example 1; dkim/1=pass (good (2048-bit) sig) header.d=corp.example header.i="@corp.example"; spf=pass smtp.mailfrom=pat@corp.example')).toEqual({
      authservId: 'mx.corp.example',
      results: [
        { method: 'dkim', result: 'pass', props: { 'header.d': 'corp.example', 'header.i': '@corp.example' } },
        { method: 'spf', result: 'pass', props: { 'smtp.mailfrom': 'pat@corp.example' } },
      ],
    });
    expect(parseAuthenticationResults('mx.corp.example; none')).toEqual({ authservId: 'mx.corp.example', results: [] });
    expect(parseAuthenticationResults('mx.corp.example; dmarc=fail (dmarc=pass) reason="a ; b" header.from=corp.example')!.results).toEqual([
      { method: 'dmarc', result: 'fail', props: { 'header.from': 'corp.example' } },
    ]);
    // A comment or quote left open, a method without a result: no result at all.
    for (const bad of ['mx.corp.example; dmarc=pass (open', 'mx.corp.example; dmarc=pass header.from="x', 'mx.corp.example; dmarc', '; dmarc=pass', 'mx.corp.example extra; dmarc=pass']) {
      expect(parseAuthenticationResults(bad)).toBeUndefined();
    }
  });

  it('alignment: the From: domain, a parent of it or a subdomain of it; never siblings or a bare TLD', () => {
    expect(aligned('corp.example', 'corp.example')).toBe(true);
    expect(aligned('corp.example', 'mail.corp.example')).toBe(true);
    expect(aligned('mail.corp.example', 'corp.example')).toBe(true);
    expect(aligned('CORP.example.', 'corp.example')).toBe(true);
    expect(aligned('attacker.example', 'corp.example')).toBe(false);
    expect(aligned('corp.example.attacker.example', 'corp.example')).toBe(false);
    expect(aligned('a.github.io', 'b.github.io')).toBe(false);
    expect(aligned('example', 'corp.example')).toBe(false);
    expect(aligned('', 'corp.example')).toBe(false);
  });

  it('counts dmarc=pass for From:, or dkim=pass aligned with From:; never spf alone; only the top-most header of exactly the trusted id', () => {
    const verdict = (headers: string[], from = 'pat@corp.example') => senderVerdict(headers, MX, from);
    expect(verdict([`${MX}; dmarc=pass header.from=corp.example`])).toMatchObject({ ok: true, by: 'dmarc' });
    expect(verdict([`MX.Corp.Example; dmarc=pass`])).toMatchObject({ ok: true, by: 'dmarc' });
    expect(verdict([`${MX}; dkim=pass header.d=corp.example; dmarc=none`], 'pat@mail.corp.example')).toMatchObject({ ok: true, by: 'dkim' });
    expect(verdict([`${MX}; dkim=pass header.i=@corp.example; dmarc=none`])).toMatchObject({ ok: true, by: 'dkim' });
    expect(verdict([`${MX}; dmarc=pass header.from=attacker.example`])).toMatchObject({ ok: false });
    expect(verdict([`${MX}; spf=pass smtp.mailfrom=pat@corp.example; dkim=none`])).toMatchObject({ ok: false });
    expect(verdict([`${MX}; dkim=pass header.d=attacker.example`])).toMatchObject({ ok: false });
    // Another hop's header above ours does not hide ours; ours above a forged one wins.
    expect(verdict([`relay.corp.example; dmarc=none`, `${MX}; dmarc=pass`])).toMatchObject({ ok: true });
    expect(verdict([`${MX}; dmarc=fail`, `${MX}; dmarc=pass`])).toMatchObject({ ok: false });
    // Ours on top but broken (a value the sender chose opened a comment): refused, not the forged one below.
    expect(verdict([`${MX}; dmarc=fail header.from=corp.example (`, `${MX}; dmarc=pass`])).toEqual({ ok: false, reason: `the Authentication-Results from ${MX} does not parse (RFC 8601)` });
    expect(verdict([`${MX}.attacker.example (; dmarc=pass`, `${MX}; dmarc=pass`])).toMatchObject({ ok: true });
    expect(senderVerdict([`${MX}; dmarc=pass`], MX, undefined)).toEqual({ ok: false, reason: 'the message has no From: address' });
  });
});

describe('a mail forged as an SRE', () => {
  it('is refused in each of the five ways the issue found, recorded with the reason, and reaches neither the model nor a tool; the genuine mail does', async () => {
    const forgeries: Array<[string, string[]]> = [
      ['SpfPassDmarcFail', [`${MX}; spf=pass smtp.mailfrom=mallory@attacker.example; dkim=pass header.d=attacker.example; dmarc=fail header.from=corp.example`]],
      ['LookAlikeId', [`${MX}.attacker.example; spf=pass smtp.mailfrom=pat@corp.example; dkim=pass header.d=corp.example; dmarc=pass header.from=corp.example`]],
      ['BelowRealFail', [`${MX}; spf=fail smtp.mailfrom=pat@corp.example; dkim=none; dmarc=fail header.from=corp.example`, `${MX}; dmarc=pass header.from=corp.example`]],
      ['PassInComment', [`${MX}; dmarc=fail (dmarc=pass) header.from=corp.example; dkim=none (dkim=pass header.d=corp.example)`]],
      ['NoHeader', []],
    ];
    const transcript = [];
    for (const [name, headers] of forgeries) {
      const { messageId, raw } = message(name, headers);
      const answer = await deliver(raw, 'mallory@attacker.example');
      const row = await db()('channel_messages').where({ channel: 'email', direction: 'inbound' }).whereRaw(`payload->>'message_id' = ?`, [messageId]).first();
      transcript.push({ forgery: name, smtp: answer.text, recorded: row && { status: row.status, error: row.error, from: row.remote_address } });
    }
    const refused = (reason: string) => ({ status: 'refused', error: `sender not authenticated: ${reason}`, from: 'pat@corp.example' });
    const notAligned = (results: string) => refused(`${MX} shows no dmarc=pass and no dkim=pass aligned with corp.example (${results})`);
    const smtp550 = `550 ${NOT_AUTHENTICATED}`;
    expect(transcript).toEqual([
      { forgery: 'SpfPassDmarcFail', smtp: smtp550, recorded: notAligned('spf=pass dkim=pass dmarc=fail') },
      { forgery: 'LookAlikeId', smtp: smtp550, recorded: refused(`no Authentication-Results from ${MX}`) },
      { forgery: 'BelowRealFail', smtp: smtp550, recorded: notAligned('spf=fail dkim=none dmarc=fail') },
      { forgery: 'PassInComment', smtp: smtp550, recorded: notAligned('dmarc=fail dkim=none') },
      { forgery: 'NoHeader', smtp: smtp550, recorded: refused(`no Authentication-Results from ${MX}`) },
    ]);

    // The genuine mail, through the same path: the model is asked and its tool runs.
    const genuineAuth = [`${MX};\r\n\tspf=pass smtp.mailfrom=pat@corp.example;\r\n\tdkim=pass (2048-bit key) header.d=corp.example header.s=sel;\r\n\tdmarc=pass (p=reject) header.from=corp.example`];
    const genuine = message('Genuine', genuineAuth);
    expect((await deliver(genuine.raw)).code).toBe(250);
    // A lead changes data: the reply asks first (issue 39 point 8), and the person's own mail saying yes runs it.
    await eventually(async () => relay.delivered.find((m) => m.envelope.to.includes('pat@corp.example')), 15_000, 'the reply to the genuine mail');
    expect(await leadsNamed('Genuine')).toHaveLength(0);
    const yes = message('Re: Genuine', genuineAuth, undefined, 'yes');
    expect((await deliver(yes.raw)).code).toBe(250);
    await eventually(async () => (await leadsNamed('Genuine')).length === 1, 15_000, 'the lead of the genuine mail, on its yes');

    for (const [name] of forgeries) {
      expect(modelSaw(`create lead ${name}`)).toBe(false);
      expect(await leadsNamed(name)).toHaveLength(0);
    }
    expect(modelSaw('create lead Genuine')).toBe(true);
    // The refused rows are never queued: nothing processed them, and no reply was recorded for them.
    const refusedRows = await db()('channel_messages').where({ channel: 'email', status: 'refused' });
    expect(refusedRows).toHaveLength(5);
    expect(await db()('channel_messages').whereIn('reply_to', refusedRows.map((r) => r.message_id))).toHaveLength(0);
  });
});

describe('who may connect', () => {
  it('a host outside EMAIL_RELAYS is refused at connect (554) and nothing is recorded', async () => {
    // The earlier test's last reply may still be on its way; counting before it is written would see it here.
    await queuesIdle();
    const before = await db()('channel_messages').count<Array<{ count: string }>>('* as count');
    const { raw } = message('FromStranger', [`${MX}; dmarc=pass header.from=corp.example`]);
    const answer = await deliver(raw, 'pat@corp.example', '127.0.0.2');
    expect(answer.code).toBe(554);
    expect(answer.text).toContain('127.0.0.2 may not deliver here');
    expect(await db()('channel_messages').count<Array<{ count: string }>>('* as count')).toEqual(before);
  });
});

describe('a production start', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const long = 'a-long-enough-secret-value';
  const production = {
    NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db', API_KEYS: long, ADMIN_USER: 'ops', ADMIN_PASSWORD: long, ALERT_WEBHOOK_TOKEN: long, CRM_WEBHOOK_SECRET: long,
    METRICS_TOKEN: long, PUBLIC_URL: 'https://ops.example.org', OIDC_ISSUER_URL: 'https://id.example.org', OIDC_CLIENT_ID: 'switchboard', OIDC_CLIENT_SECRET: long,
    EMAIL_ADDRESS: 'assistant@switchboard.test', EMAIL_SMTP_URL: 'smtp://127.0.0.1:1', EMAIL_LISTEN_PORT: '0',
  };
  /** Starts the email role as `npm start` would, with the production settings and `env`; waits for its exit. */
  const startRole = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'api/email-server/main.ts')], { cwd: root, env: { PATH: process.env.PATH, ...production, ...env }, encoding: 'utf8', timeout: 60_000 });

  it('of the email role without EMAIL_TRUSTED_AUTHSERV_ID and EMAIL_RELAYS is refused, one line per setting, no stack trace', () => {
    const run = startRole({});
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('EMAIL_TRUSTED_AUTHSERV_ID: required by the email role when NODE_ENV=production');
    expect(run.stderr).toContain('EMAIL_RELAYS: required by the email role when NODE_ENV=production');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('refuses an EMAIL_RELAYS entry that is not an address or range', () => {
    const run = startRole({ EMAIL_TRUSTED_AUTHSERV_ID: MX, EMAIL_RELAYS: '10.0.0.1,mx.corp.example' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('EMAIL_RELAYS: must be comma-separated IP addresses or CIDR ranges');
  }, 60_000);
});
