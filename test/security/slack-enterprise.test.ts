/**
 * Issue 39 point 3: with SLACK_ENTERPRISE_IDS set, an event must come from a configured team and a
 * configured Enterprise Grid org; a configured team id under another org is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startLocalSlack } from '../helpers/local-slack-server.js';
import { configureSlack, postSlack, slackBotToken, slackEvent } from '../helpers/channels.js';
import { db } from '../../shared/db/index.js';

const slack = await startLocalSlack(slackBotToken);
configureSlack(slack.apiUrl);
process.env.SLACK_ENTERPRISE_IDS = 'E0GRID, E0OTHERGRID';
afterAll(() => slack.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

describe('SLACK_ENTERPRISE_IDS', () => {
  it('refuses the configured team under another org, or with no org; accepts it under a configured one', async () => {
    const stored = (user: string) => db()('channel_messages').where({ channel: 'slack', remote_address: user });
    expect((await postSlack(api.url, { ...slackEvent('U0E1', 'hi'), enterprise_id: 'E0ELSEWHERE' })).status).toBe(403);
    expect((await postSlack(api.url, slackEvent('U0E2', 'hi'))).status).toBe(403);
    expect(await stored('U0E1')).toEqual([]);
    expect(await stored('U0E2')).toEqual([]);
    expect((await postSlack(api.url, { ...slackEvent('U0E3', 'hi'), enterprise_id: 'E0GRID' })).status).toBe(200);
    expect(await stored('U0E3')).toHaveLength(1);
  });
});
