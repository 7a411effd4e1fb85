/**
 * Issue 39 point 2, the voice channel proves the call. /voice/incoming issues a signed, expiring,
 * single-use token bound to CallSid, From and To in the relay URL; the relay refuses an upgrade
 * without it or with it a second time, and a setup naming another call. Caller ID alone earns the
 * portal tool set; SRE tools need the PIN (said or keyed, attempts limited), or Twilio's A-level
 * attestation where VOICE_TRUST_ATTESTATION_A is on. Sockets, turns and idle time per call are limited.
 * SHOW_TRANSCRIPT=1 prints the refused attacks as request/response.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { eventually } from '../helpers/eventually.js';
import { freshPhone } from '../helpers/chatapp.js';
import { callParams, configureTwilioChannels, connectRelay, placeCall, postTwilio, relayUrlOf, twilioSid } from '../helpers/channels.js';
import { db } from '../../shared/db/index.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { listInteractions } from '../../shared/sessions/sessions.store.js';
import { getContext } from '../../shared/sessions/context.js';
import { setVoicePin } from '../../shared/users/voice-pin.js';
import { PIN_ACCEPTED, PIN_LOCKED, PIN_REFUSED, TURNS_EXHAUSTED } from '../../shared/channels/voice/call-guard.js';

configureTwilioChannels('http://127.0.0.1:9');
process.env.VOICE_MAX_TURNS_PER_CALL = '4';
process.env.VOICE_IDLE_SECONDS = '3';
process.env.VOICE_RELAY_TOKEN_SECONDS = '5';
process.env.VOICE_TRUST_ATTESTATION_A = 'true';
process.env.LIMIT_VOICE_PIN_ATTEMPTS = '3';
// A model that calls the tool the caller names ("call <tool>") and reads its result out; it also says which tools it was offered.
const llm = await useLocalLlm((req) => {
  const last = req.body.messages.at(-1)!;
  if (last.role === 'tool') return { content: `RESULT ${last.content}` };
  const m = /^call (\w+)$/.exec(last.content ?? '');
  if (m) return { tool_calls: [{ id: `call_${req.body.messages.length}`, name: m[1]!, arguments: '{}' }] };
  return { content: `Heard: ${last.content}` };
});

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const transcript: string[] = [];
const show = () => {
  if (process.env.SHOW_TRANSCRIPT) console.log(transcript.splice(0).join('\n'));
};

async function person(roles: string[] = []) {
  const [u] = await db()('users').insert({ phone_number: freshPhone(), display_name: 'Caller', roles }).returning(['user_id', 'phone_number']);
  return u as { user_id: string; phone_number: string };
}

/** The tools the model was offered for the request that carried `text` as the last message. */
const offeredFor = (text: string) => {
  const req = [...llm.requests].reverse().find((r) => r.body.messages.at(-1)?.content === text);
  return req?.body.tools?.map((t) => t.function.name) ?? [];
};

const closed = (ws: import('ws').WebSocket) => new Promise<{ code: number; reason: string }>((r) => {
  if (ws.readyState === ws.CLOSED) return r({ code: -1, reason: 'already closed' });
  ws.once('close', (code, reason) => r({ code, reason: reason.toString() }));
});

describe('the relay token', () => {
  it('one captured signature is refused for a second socket, and the fixed relay URL without a token is refused', async () => {
    const victim = await person();
    const call = await placeCall(api.url, victim.phone_number);
    transcript.push(`GET ${call.url} (Upgrade: websocket, X-Twilio-Signature over that URL) -> 101 Switching Protocols`);
    // The same URL and the same X-Twilio-Signature header, captured and replayed.
    const replay = connectRelay(api.url, { url: call.url });
    await expect(replay).rejects.toThrow(/403/);
    transcript.push(`GET ${call.url} (same URL, same captured X-Twilio-Signature) -> 403 Forbidden`);
    // The pre-token URL, validly signed: no token, no socket.
    await expect(connectRelay(api.url)).rejects.toThrow(/403/);
    transcript.push(`GET ${api.url.replace(/^http/, 'ws')}/voice/relay (validly signed, no token) -> 403 Forbidden`);
    // A token with its signature altered.
    const forged = call.url.replace(/\.([\w-]+)$/, (_m, mac: string) => `.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`);
    await expect(connectRelay(api.url, { url: forged })).rejects.toThrow(/403/);
    call.ws.terminate();
    show();
  });

  it("a setup with a made-up CallSid and the victim's number is refused before anything is looked up", async () => {
    const victim = await person(['sre']);
    const attacker = await person();
    const { session } = await resolveSession(victim.user_id);
    const before = llm.requests.length;
    const call = await placeCall(api.url, attacker.phone_number);
    const madeUp = twilioSid('CA');
    const shut = closed(call.ws);
    call.setup(madeUp, victim.phone_number);
    transcript.push(`socket of call ${call.callSid} (token for ${attacker.phone_number}) <- {"type":"setup","callSid":"${madeUp}","from":"${victim.phone_number}",…}`);
    const { code, reason } = await shut;
    transcript.push(`socket -> close ${code} "${reason}"`);
    expect(code).toBe(1008);
    expect(reason).toBe('setup does not match the call');
    expect((await listInteractions(session.session_id)).filter((i) => i.channel === 'voice')).toEqual([]);
    expect(llm.requests.length).toBe(before);
    // The attacker's own call sid with the victim's number is refused the same way.
    const second = await placeCall(api.url, attacker.phone_number);
    const shut2 = closed(second.ws);
    second.setup(second.callSid, victim.phone_number);
    expect((await shut2).code).toBe(1008);
    show();
  });

  it('a token older than VOICE_RELAY_TOKEN_SECONDS is refused', async () => {
    const u = await person();
    const res = await postTwilio(api.url, '/voice/incoming', callParams(u.phone_number));
    const url = relayUrlOf(await res.text());
    await new Promise((r) => setTimeout(r, 5500));
    await expect(connectRelay(api.url, { url })).rejects.toThrow(/403/);
  });

  it('a socket that never sends its setup is closed after VOICE_IDLE_SECONDS', async () => {
    const u = await person();
    const call = await placeCall(api.url, u.phone_number);
    const started = Date.now();
    const { code } = await closed(call.ws);
    expect(code).toBe(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });

  it('a second socket for one CallSid is refused (409) even with a fresh token', async () => {
    const u = await person();
    const callSid = twilioSid('CA');
    const first = await placeCall(api.url, u.phone_number, { callSid });
    const res = await postTwilio(api.url, '/voice/incoming', callParams(u.phone_number, callSid));
    const url = relayUrlOf(await res.text());
    expect(url).not.toBe(first.url);
    await expect(connectRelay(api.url, { url })).rejects.toThrow(/409/);
    first.ws.terminate();
  });
});

describe('what caller ID alone earns', () => {
  it('an SRE known only by caller ID gets the portal tools; sre_list_incidents needs the PIN, keyed or said; a wrong PIN does not', async () => {
    const sre = await person(['sre']);
    // Set in the portal (here as an integration acting for the person): a malformed PIN is a 400 naming body.pin.
    const pinAt = (pin: string) => api.request('/api/portal/profile/voice-pin', { method: 'PUT', headers: { 'X-User-Id': sre.user_id }, json: { pin } });
    const bad = await pinAt('12a4');
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors.map((e: { path: string }) => e.path)).toEqual(['body.pin']);
    expect(await (await pinAt('4815')).json()).toEqual({ voice_pin_set: true });
    expect((await db()('users').where({ user_id: sre.user_id }).first()).voice_pin_hash).toMatch(/^scrypt\$/);
    const call = await placeCall(api.url, sre.phone_number);
    try {
      call.setup();
      call.say('call sre_list_incidents');
      const refused = await call.nextReply();
      expect(offeredFor('call sre_list_incidents')).not.toContain('sre_list_incidents');
      expect(offeredFor('call sre_list_incidents')).toContain('portal_list_cases');
      expect(refused.text).toMatch(/not available|unknown tool|forbidden|not allowed/i);
      transcript.push('caller (caller ID of an SRE, no PIN): call sre_list_incidents', `assistant: ${refused.text}`);

      for (const digit of '*9999#') call.send({ type: 'dtmf', digit });
      expect((await call.nextReply()).text).toBe(PIN_REFUSED);
      for (const digit of '*4815#') call.send({ type: 'dtmf', digit });
      expect((await call.nextReply()).text).toBe(PIN_ACCEPTED);
      call.say('call sre_list_incidents');
      const ran = await call.nextReply();
      expect(ran.text).toMatch(/^RESULT /);
      expect(offeredFor('call sre_list_incidents')).toContain('sre_list_incidents');
      transcript.push('caller keys *9999# -> "' + PIN_REFUSED + '"; keys *4815# -> "' + PIN_ACCEPTED + '"', 'caller: call sre_list_incidents', `assistant: ${ran.text.slice(0, 80)}…`);
      // The PIN entries are neither turns nor in the session's history.
      await call.hangUp();
      const { session } = await resolveSession(sre.user_id);
      const history = JSON.stringify((await getContext(session.session_id)).conversation_history);
      expect(history).not.toContain('4815');
      expect(history).not.toContain('9999');
    } finally {
      call.ws.terminate();
    }
    // Said, on another call.
    const spoken = await placeCall(api.url, sre.phone_number);
    spoken.setup();
    spoken.say('My PIN is 4 8 1 5.');
    expect((await spoken.nextReply()).text).toBe(PIN_ACCEPTED);
    spoken.say('call sre_list_incidents');
    expect((await spoken.nextReply()).text).toMatch(/^RESULT /);
    await spoken.hangUp();
    show();
  });

  it('PIN attempts are limited per person (LIMIT_VOICE_PIN_ATTEMPTS), right or wrong', async () => {
    const sre = await person(['sre']);
    await setVoicePin(sre.user_id, '2468');
    const call = await placeCall(api.url, sre.phone_number);
    try {
      call.setup();
      for (const pin of ['1111', '2222', '3333']) {
        call.say(`my PIN is ${pin}`);
        expect((await call.nextReply()).text).toBe(PIN_REFUSED);
      }
      call.say('my PIN is 2468');
      expect((await call.nextReply()).text).toBe(PIN_LOCKED);
      call.say('call sre_list_incidents');
      await call.nextReply();
      expect(offeredFor('call sre_list_incidents')).not.toContain('sre_list_incidents');
    } finally {
      await call.hangUp();
    }
  });

  it("Twilio's A-level attestation (VOICE_TRUST_ATTESTATION_A) opens the person's rights; B-level does not, and the setup cannot claim it", async () => {
    const sre = await person(['sre']);
    const attested = await placeCall(api.url, sre.phone_number, { params: { StirVerstat: 'TN-Validation-Passed-A' } });
    attested.setup();
    attested.say('call sre_list_incidents');
    expect((await attested.nextReply()).text).toMatch(/^RESULT /);
    await attested.hangUp();
    const partial = await placeCall(api.url, sre.phone_number, { params: { StirVerstat: 'TN-Validation-Passed-B' } });
    partial.setup();
    partial.send({ type: 'prompt', voicePrompt: 'call sre_list_incidents', last: true, StirVerstat: 'TN-Validation-Passed-A' });
    await partial.nextReply();
    expect(offeredFor('call sre_list_incidents')).not.toContain('sre_list_incidents');
    await partial.hangUp();
  });
});

describe('turns per call', () => {
  it('past VOICE_MAX_TURNS_PER_CALL the caller hears goodbye and the call ends', async () => {
    const u = await person();
    const call = await placeCall(api.url, u.phone_number);
    const shut = closed(call.ws);
    call.setup();
    for (let i = 1; i <= 4; i++) {
      call.say(`turn ${i}`);
      expect((await call.nextReply()).text).toBe(`Heard: turn ${i}`);
    }
    call.say('turn 5');
    expect((await call.nextReply()).text).toBe(TURNS_EXHAUSTED);
    await eventually(async () => call.received.some((m) => m.type === 'end'), 5000, 'the end message');
    await shut;
    expect(offeredFor('turn 5')).toEqual([]);
    expect(llm.requests.some((r) => r.body.messages.at(-1)?.content === 'turn 5')).toBe(false);
  });
});
