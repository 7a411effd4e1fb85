/**
 * Agent turns are limited per person over every channel (LIMIT_AGENT_TURNS_PER_MINUTE): past it the
 * portal chat is a 429 with Retry-After and nothing is published, a text channel answers with a
 * notice, and in neither case is the model asked. Refusals are counted by limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../helpers/chatapp.js';
import { eventually } from '../helpers/eventually.js';
import { portalUserWithoutPhone } from '../helpers/people.js';
import { createUser } from '../../shared/users/users.store.js';
import { db } from '../../shared/db/index.js';

process.env.LIMIT_AGENT_TURNS_PER_MINUTE = '3';
const llm = await useLocalLlm(() => ({ content: 'Noted.' }));
const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const refusals = async () => Number(/switchboard_limit_refusals_total\{limit="agentTurns"\} (\d+)/.exec(await (await api.request('/metrics')).text())?.[1] ?? 0);

describe('agent turns per person', () => {
  it('portal chat: the fourth turn within the minute is a 429 with Retry-After; the model was asked three times; nothing of the fourth is published', async () => {
    const person = await portalUserWithoutPhone();
    const before = { model: llm.requests.length, refused: await refusals() };
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await api.request('/api/portal/chat', { method: 'POST', json: { message: `turn ${i}` }, headers: { 'X-User-Id': person } });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 3).every((s) => s === 200 || s === 202)).toBe(true);
    expect(statuses.slice(3)).toEqual([429, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await last!.json()).detail).toContain('LIMIT_AGENT_TURNS_PER_MINUTE');
    await eventually(async () => (llm.requests.length - before.model >= 3 ? true : undefined), 15_000, 'three turns answered');
    expect(llm.requests.length - before.model).toBe(3);
    const messages = await db()('session_messages as m').join('sessions as s', 's.session_id', 'm.session_id').where('s.user_id', person).where('m.role', 'user').select('m.content');
    expect(messages.map((m) => m.content).sort()).toEqual(['turn 0', 'turn 1', 'turn 2']);
    expect((await refusals()) - before.refused).toBe(2);
  }, 60_000);

  it('a text channel (messaging app): past the limit the person gets a notice and the model is not asked', async () => {
    const phone = freshPhone();
    await createUser({ phone_number: phone });
    const before = llm.requests.length;
    for (let i = 0; i < 4; i++) {
      expect((await postWebhook(api.url, whatsappParams(phone, `message ${i}`))).status).toBe(200);
      await eventually(async () => (twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`).length > i ? true : undefined), 20_000, `reply ${i}`);
    }
    const replies = twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`).map((m) => m.params.Body);
    expect(replies.slice(0, 3)).toEqual(['Noted.', 'Noted.', 'Noted.']);
    expect(replies[3]).toMatch(/faster than I can answer; please try again in \d+ seconds/);
    expect(llm.requests.length - before).toBe(3);
  }, 90_000);
});
