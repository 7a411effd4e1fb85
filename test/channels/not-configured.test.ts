/**
 * A channel without its settings is off: its provider routes answer 503 naming the missing
 * variables (before any signature check or record), and GET /api/channels says which are live.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';

for (const name of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'CHATAPP_FROM_NUMBER', 'SMS_FROM_NUMBER', 'SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN', 'SLACK_TEAM_IDS', 'EMAIL_ADDRESS', 'EMAIL_SMTP_URL']) delete process.env[name];

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const form = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('a channel that is not configured', () => {
  it.each([
    ['/sms/webhook', form, 'From=%2B14155550100&MessageSid=SM1&To=%2B14155550101&Body=hi', 'sms', ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'SMS_FROM_NUMBER']],
    ['/slack/events', { 'Content-Type': 'application/json' }, '{"type":"url_verification","challenge":"x"}', 'slack', ['SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN', 'SLACK_TEAM_IDS']],
    ['/slack/interactions', form, 'payload=%7B%22type%22%3A%22block_actions%22%7D', 'slack', ['SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN', 'SLACK_TEAM_IDS']],
    ['/voice/incoming', form, 'CallSid=CA1&From=%2B14155550100', 'voice', ['TWILIO_AUTH_TOKEN']],
  ])('POST %s answers 503 naming the missing settings, and records nothing', async (path, headers, body, channel, missing) => {
    const res = await fetch(`${api.url}${path}`, { method: 'POST', headers: headers as Record<string, string>, body });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    const problem = await res.json();
    expect(problem).toMatchObject({ channel, missing_settings: missing });
    expect(problem.detail).toContain(missing.join(', '));
    expect(await db()('channel_messages').count('* as n').first()).toEqual({ n: 0 });
  });

  it('GET /api/channels lists each channel as live or with the settings it needs', async () => {
    const res = await api.request('/api/channels');
    expect(res.status).toBe(200);
    expect((await res.json()).channels).toEqual([
      { channel: 'chat', live: true, missing_settings: [] },
      { channel: 'chatapp', live: false, missing_settings: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'CHATAPP_FROM_NUMBER'] },
      { channel: 'email', live: false, missing_settings: ['EMAIL_ADDRESS', 'EMAIL_SMTP_URL'] },
      { channel: 'slack', live: false, missing_settings: ['SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN', 'SLACK_TEAM_IDS'] },
      { channel: 'sms', live: false, missing_settings: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'SMS_FROM_NUMBER'] },
      { channel: 'voice', live: false, missing_settings: ['TWILIO_AUTH_TOKEN'] },
    ]);
  });

  it('the relay socket refuses the upgrade (503)', async () => {
    const { WebSocket } = await import('ws');
    const ws = new WebSocket(`${api.url.replace(/^http/, 'ws')}/voice/relay`, { headers: { 'X-Twilio-Signature': 'x' } });
    await expect(new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); })).rejects.toThrow(/503/);
  });
});
