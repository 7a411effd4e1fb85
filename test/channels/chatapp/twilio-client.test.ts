import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chatappClient,
  describeProviderError,
  isTransientProviderError,
  sendSms,
  twilioSignature,
  validTwilioSignature,
} from '../../../shared/clients/twilio.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';

const twilio = await startLocalTwilio();
const accountSid = 'AC' + '0'.repeat(31) + '1';
process.env.TWILIO_ACCOUNT_SID = accountSid;
process.env.TWILIO_AUTH_TOKEN = 'auth-token-1';
process.env.TWILIO_API_BASE_URL = twilio.baseUrl;
process.env.CHATAPP_FROM_NUMBER = 'whatsapp:+14155238886';
afterAll(() => twilio.close());

describe('X-Twilio-Signature', () => {
  // Twilio's worked example (docs: "Webhooks security", validating requests), auth token 12345.
  const docsUrl = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const docsParams = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };

  it("accepts Twilio's published example signature", () => {
    expect(twilioSignature('12345', docsUrl, docsParams)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    expect(validTwilioSignature('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', docsUrl, docsParams)).toBe(true);
  });

  it('refuses the example with a changed parameter, URL, token or signature', () => {
    const sig = '0/KCTR6DLpKmkAf8muzZqo1nDgQ=';
    expect(validTwilioSignature('12345', sig, docsUrl, { ...docsParams, Digits: '9999' })).toBe(false);
    expect(validTwilioSignature('12345', sig, 'https://mycompany.com/myapp.php?foo=1&bar=3', docsParams)).toBe(false);
    expect(validTwilioSignature('54321', sig, docsUrl, docsParams)).toBe(false);
    expect(validTwilioSignature('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ', docsUrl, docsParams)).toBe(false);
  });

  it('own vector: a WhatsApp inbound message signed over the sorted parameters', () => {
    const url = 'https://switchboard.example/chatapp/webhook';
    const params = { MessageSid: 'SM0123', AccountSid: accountSid, From: 'whatsapp:+14155550100', To: 'whatsapp:+14155238886', Body: 'Hi there', NumMedia: '0', WaId: '14155550100' };
    // HMAC-SHA1(token, url + each key+value in key order), base64: computed independently of the twilio package.
    const data = url + Object.keys(params).sort().map((k) => k + params[k as keyof typeof params]).join('');
    const expected = createHmac('sha1', 'auth-token-1').update(data).digest('base64');
    expect(twilioSignature('auth-token-1', url, params)).toBe(expected);
    expect(validTwilioSignature('auth-token-1', expected, url, params)).toBe(true);
    // The validator also accepts the URL with its default port spelled out, as Twilio may sign either.
    expect(validTwilioSignature('auth-token-1', expected, 'https://switchboard.example:443/chatapp/webhook', params)).toBe(true);
    expect(validTwilioSignature('auth-token-1', expected, 'http://switchboard.example/chatapp/webhook', params)).toBe(false);
  });
});

describe('provider REST API through the twilio package', () => {
  it('sends free text by POST /2010-04-01/Accounts/{sid}/Messages.json with basic auth and form fields', async () => {
    const receipt = await chatappClient().send({ to: 'whatsapp:+14155550100', body: 'hello' });
    const sent = twilio.messages.at(-1)!;
    expect(receipt).toEqual({ sid: sent.sid, status: 'queued' });
    expect(sent.accountSid).toBe(accountSid);
    expect(sent.auth).toEqual({ user: accountSid, password: 'auth-token-1' });
    expect(sent.params).toEqual({ From: 'whatsapp:+14155238886', To: 'whatsapp:+14155550100', Body: 'hello' });
  });

  it('one account sends for the messaging app and for sms (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)', async () => {
    await chatappClient().send({ to: 'whatsapp:+14155550100', body: 'by whatsapp' });
    await sendSms({ from: '+14155550199', to: '+14155550100', body: 'by sms' });
    const [whatsapp, sms] = twilio.messages.slice(-2);
    expect(whatsapp!.auth).toEqual({ user: accountSid, password: 'auth-token-1' });
    expect(sms!.auth).toEqual({ user: accountSid, password: 'auth-token-1' });
    expect(sms!.params).toMatchObject({ From: '+14155550199', To: '+14155550100', Body: 'by sms' });
  });

  it('sends a template as ContentSid with numbered ContentVariables', async () => {
    await chatappClient().send({ to: 'whatsapp:+14155550100', contentSid: 'HX123', contentVariables: { '1': 'Pay rent', '2': '5pm' } });
    expect(twilio.messages.at(-1)!.params).toMatchObject({ ContentSid: 'HX123', ContentVariables: '{"1":"Pay rent","2":"5pm"}' });
  });

  it('creates a rich message once as twilio/quick-reply content', async () => {
    const rich = { kind: 'buttons' as const, body: 'Pick one', buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] };
    const sid = await chatappClient().richContentSid(rich);
    expect(await chatappClient().richContentSid(rich)).toBe(sid);
    expect(twilio.contents).toHaveLength(1);
    expect(twilio.contents[0]!.body.types).toEqual({ 'twilio/quick-reply': { body: 'Pick one', actions: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] } });
    expect(twilio.contents[0]!.auth.user).toBe(accountSid);
  });

  it('tells a refused request from a transient failure', async () => {
    twilio.failNext({ status: 400, code: 21211, message: "The 'To' number is not a valid phone number." }, { status: 503, code: 20503, message: 'Service unavailable' });
    const refused = await chatappClient().send({ to: 'whatsapp:+1', body: 'x' }).catch((e: unknown) => e);
    expect(isTransientProviderError(refused)).toBe(false);
    expect(describeProviderError(refused)).toMatch(/provider 400 \(code 21211\)/);
    const unavailable = await chatappClient().send({ to: 'whatsapp:+14155550100', body: 'x' }).catch((e: unknown) => e);
    expect(isTransientProviderError(unavailable)).toBe(true);
  });
});
