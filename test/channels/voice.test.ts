/**
 * The voice channel: Twilio's signed incoming-call webhook answers ConversationRelay TwiML, and a
 * client speaking ConversationRelay's protocol on the signed socket holds a call: one voice
 * interaction for the call, each utterance and streamed reply published with the call sid, hang-up
 * closing it. The cross-channel rule: the caller writes on Slack during the call and the call's
 * model context receives the Slack message as `[Real-time update from slack] user: <content>`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSlack } from '../helpers/local-slack-server.js';
import { subscribe } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';
import { freshPhone } from '../helpers/chatapp.js';
import { callParams, configureSlack, configureTwilioChannels, connectRelay, linkSlackUser, placeCall, postSlack, postTwilio, relayUrlOf, slackBotToken, slackEvent, twilioAuthToken, twilioSid } from '../helpers/channels.js';
import { twilioSignature } from '../../shared/clients/twilio.js';
import { createUser } from '../../shared/users/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { getContext } from '../../shared/sessions/context.js';
import { listInteractions } from '../../shared/sessions/sessions.store.js';
import { db } from '../../shared/db/index.js';

const slack = await startLocalSlack(slackBotToken);
configureSlack(slack.apiUrl);
configureTwilioChannels('http://127.0.0.1:9');
process.env.VOICE_WELCOME_GREETING = 'Hi, switchboard here.';
const llm = await useLocalLlm((req) => {
  const last = req.body.messages.at(-1)!.content ?? '';
  if (last.startsWith('[Real-time update from slack] user:')) return { content: 'I see you just wrote on Slack. I will take care of it.' };
  if (last === 'Tell me a long story') return { content: 'Once upon a time there was a very long story that nobody ever heard to the end because callers interrupt.', chunkDelayMs: 150 };
  return { content: `Voice answer to: ${last}` };
});
afterAll(() => slack.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

describe('POST /voice/incoming', () => {
  it('connects a known caller to ConversationRelay on the relay socket', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const res = await postTwilio(api.url, '/voice/incoming', callParams(u.phone_number));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/xml/);
    const twiml = await res.text();
    const relay = relayUrlOf(twiml);
    // The relay URL carries the call's single-use token (see test/security/voice-call-proof.test.ts).
    expect(relay).toMatch(new RegExp(`^${api.url.replace(/^http/, 'ws')}/voice/relay\\?token=[\\w-]+\\.[\\w-]+$`));
    expect(twiml).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Connect><ConversationRelay url="${relay}" welcomeGreeting="Hi, switchboard here." dtmfDetection="true"/></Connect></Response>`);
  });

  it('tells an unknown caller so and hangs up', async () => {
    const res = await postTwilio(api.url, '/voice/incoming', callParams(freshPhone()));
    expect(await res.text()).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Say>Sorry, we couldn't find an account linked to this number. Goodbye.</Say><Hangup/></Response>`);
  });

  it('refuses a missing (400) or wrong (403) signature', async () => {
    const params = callParams(freshPhone());
    expect((await postTwilio(api.url, '/voice/incoming', params, null)).status).toBe(400);
    expect((await postTwilio(api.url, '/voice/incoming', params, 'bm90IGEgc2lnbmF0dXJl')).status).toBe(403);
  });
});

describe('the relay socket', () => {
  it('refuses an upgrade without a valid X-Twilio-Signature', async () => {
    await expect(connectRelay(api.url, { signature: null })).rejects.toThrow(/403/);
    await expect(connectRelay(api.url, { signature: 'bm90IGEgc2lnbmF0dXJl' })).rejects.toThrow(/403/);
  });

  it('without TRUST_PROXY, a forged X-Forwarded-Host does not change the URL the signature is checked against', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const callSid = twilioSid('CA');
    const res = await postTwilio(api.url, '/voice/incoming', callParams(u.phone_number, callSid));
    const url = relayUrlOf(await res.text());
    const forged = url.replace(/^ws:\/\/[^/]+/, 'ws://relay.evil.example');
    const headers = { 'X-Forwarded-Host': 'relay.evil.example', 'X-Forwarded-Proto': 'ws' };
    // Signed over the host the header names: refused, the URL is this server's.
    await expect(connectRelay(api.url, { url, signature: twilioSignature(twilioAuthToken, forged, {}), headers })).rejects.toThrow(/403/);
    // Signed over this server's URL: the header changes nothing, the call connects (its token was not used up).
    const relay = await connectRelay(api.url, { url, headers, defaults: { callSid, from: u.phone_number } });
    try {
      relay.setup();
      relay.say('Hello');
      expect((await relay.nextReply()).text).toBe('Voice answer to: Hello');
    } finally {
      relay.ws.terminate();
    }
  });

  it('holds a call: one voice interaction, utterances and streamed replies published with the call sid, hang-up closes it', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const web = subscribe(api.url, session.session_id, 'chat');
    await web.opened;
    const callSid = twilioSid('CA');
    const call = await placeCall(api.url, u.phone_number, { callSid });
    try {
      call.setup(callSid, u.phone_number);
      const joined = await web.next((e) => e.event_type === 'CHANNEL_JOINED');
      expect(joined).toMatchObject({ channel: 'voice', data: { channel_ref: callSid } });
      call.say('Book a table for two at eight');
      const reply = await call.nextReply();
      expect(reply.text).toBe('Voice answer to: Book a table for two at eight');
      expect(reply.tokens.length).toBeGreaterThan(3); // streamed as the model wrote it, then last: true
      expect(reply.tokens.at(-1)).toBe('');
      const userMessage = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'user');
      const assistant = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      expect(userMessage).toMatchObject({ channel: 'voice', data: { content: 'Book a table for two at eight', metadata: { call_sid: callSid }, interaction_id: joined.data.interaction_id } });
      expect(assistant).toMatchObject({ channel: 'voice', data: { content: reply.text, metadata: { call_sid: callSid } } });
      await call.hangUp();
      const left = await web.next((e) => e.event_type === 'CHANNEL_LEFT');
      expect(left).toMatchObject({ channel: 'voice', data: { interaction_id: joined.data.interaction_id, reason: 'hangup' } });
      const [voice] = (await listInteractions(session.session_id)).filter((i) => i.channel === 'voice');
      expect(voice).toMatchObject({ status: 'closed', channel_ref: callSid });
      // The final history added nothing already published.
      const history = (await getContext(session.session_id)).conversation_history;
      expect(history.map((m) => [m.channel, m.role, m.content])).toEqual([
        ['voice', 'user', 'Book a table for two at eight'],
        ['voice', 'assistant', 'Voice answer to: Book a table for two at eight'],
      ]);
    } finally {
      web.close();
      call.ws.terminate();
    }
  });

  it('an interrupt stops the reply; what the caller heard is published (interrupted); a keypad digit is a turn', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const web = subscribe(api.url, session.session_id, 'chat');
    await web.opened;
    const call = await placeCall(api.url, u.phone_number);
    try {
      call.setup();
      await web.next((e) => e.event_type === 'CHANNEL_JOINED');
      call.say('Tell me a long story');
      await eventually(async () => call.received.filter((m) => m.type === 'text').length >= 3, 10_000, 'the first tokens');
      call.send({ type: 'interrupt', utteranceUntilInterrupt: 'Once upon a', durationUntilInterruptMs: 900 });
      const cut = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      expect(cut.data).toMatchObject({ content: 'Once upon a', metadata: { interrupted: true } });
      const tokensAtCut = call.received.length;
      call.send({ type: 'dtmf', digit: '5' });
      const keypad = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'user' && e.data.content === '[keypad] 5');
      expect(keypad.channel).toBe('voice');
      const reply = await call.nextReply();
      // The interrupted reply never finished: no words of it after the cut, and the next reply is the keypad's.
      expect(call.received.slice(tokensAtCut).some((m) => String(m.token).includes('story'))).toBe(false);
      expect(reply.text, reply.text).toMatch(/Voice answer to: \[keypad\] 5$/);
    } finally {
      web.close();
      await call.hangUp();
    }
  });

  it('a caller whose number left their account after the call was answered hears the refusal and the call is ended', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const call = await placeCall(api.url, u.phone_number);
    await db()('users').where({ user_id: u.user_id }).update({ phone_number: freshPhone() });
    call.setup();
    const reply = await call.nextReply();
    expect(reply.text).toBe("Sorry, we couldn't find an account linked to this number. Goodbye.");
    await eventually(async () => call.received.some((m) => m.type === 'end'), 5000, 'the end message');
    call.ws.terminate();
  });
});

describe('cross-channel: a message written on Slack during a call', () => {
  it("enters the call's model context as `[Real-time update from slack] user: <content>` and is spoken about", async () => {
    const slackId = `U${randomBytes(4).toString('hex').toUpperCase()}`;
    const u = await createUser({ phone_number: freshPhone(), display_name: 'Caller' });
    await linkSlackUser(slackId, u.user_id);
    const callSid = twilioSid('CA');
    const transcript: string[] = [];
    const call = await placeCall(api.url, u.phone_number, { callSid });
    try {
      call.setup(callSid, u.phone_number);
      call.say('I need to move my dentist appointment');
      transcript.push('caller (voice): I need to move my dentist appointment', `assistant (voice, spoken): ${(await call.nextReply()).text}`);

      // During the call the same person writes to the app on Slack.
      const event = slackEvent(slackId, 'Here is the new date: Friday 10:00');
      expect((await postSlack(api.url, event)).status).toBe(200);
      transcript.push(`user (slack DM ${event.event.channel}): Here is the new date: Friday 10:00`);
      const slackReply = await eventually(async () => slack.posted.find((m) => m.channel === event.event.channel), 15_000, 'the Slack reply');
      transcript.push(`assistant (slack, in thread ${slackReply.thread_ts}): ${slackReply.text}`);

      // The call speaks about it without being asked.
      const spoken = await call.nextReply();
      transcript.push(`assistant (voice, spoken unprompted): ${spoken.text}`);
      expect(spoken.text).toBe('I see you just wrote on Slack. I will take care of it.');
      const update = '[Real-time update from slack] user: Here is the new date: Friday 10:00';
      const aboutSlack = llm.requests.find((r) => r.body.stream && r.body.messages.at(-1)!.content === update);
      expect(aboutSlack, 'the call asked its model with the Slack message in the spec format').toBeDefined();

      // And it stays in the call's context: the next utterance's request carries it, exactly.
      call.say('What did I just send you?');
      transcript.push('caller (voice): What did I just send you?', `assistant (voice, spoken): ${(await call.nextReply()).text}`);
      const next = llm.requests.find((r) => r.body.stream && r.body.messages.at(-1)!.content === 'What did I just send you?')!;
      expect(next.body.messages).toContainEqual({ role: 'user', content: update });
      const contextLines = next.body.messages.map((m) => `  ${m.role}: ${m.content}`);
      transcript.push("call's model context for that answer:", ...contextLines);
      if (process.env.SHOW_TRANSCRIPT) console.log(transcript.join('\n'));
    } finally {
      await call.hangUp();
    }
  });
});
