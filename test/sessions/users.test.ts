import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { expectFieldError, json, newUser, randomPhone } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

describe('users and channel consents', () => {
  it('a user is created with an E.164 phone number and found by it', async () => {
    const phone = randomPhone();
    const created = await json(await api.request('/api/users', { method: 'POST', json: { phone_number: phone, display_name: 'Ada', email: 'ada@example.com' } }), 201);
    expect(created).toEqual({ user_id: expect.any(String), display_name: 'Ada', phone_number: phone, email: 'ada@example.com' });
    expect(await json(await api.request(`/api/users/by-phone/${phone}`), 200)).toEqual(created);
    expect(await json(await api.request(`/api/users/by-phone/${encodeURIComponent(phone)}`), 200)).toEqual(created);
    expect(await json(await api.request(`/api/users/${created.user_id}`), 200)).toEqual(created);
  });

  it('a phone number belongs to one user (409 naming the existing one)', async () => {
    const phone = randomPhone();
    const first = await json(await api.request('/api/users', { method: 'POST', json: { phone_number: phone } }), 201);
    const dup = await api.request('/api/users', { method: 'POST', json: { phone_number: phone } });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toMatchObject({ user_id: first.user_id });
  });

  it('bad phone numbers and emails are 400s naming the field; unknown users 404', async () => {
    const bad = await api.request('/api/users', { method: 'POST', json: { phone_number: '0155 1234', email: 'nope' } });
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expectFieldError(body, 'body.phone_number');
    expectFieldError(body, 'body.email');
    const badLookup = await api.request('/api/users/by-phone/12345');
    expect(badLookup.status).toBe(400);
    expectFieldError(await badLookup.json(), 'params.phone');
    expect((await api.request('/api/users/by-phone/+19999999999')).status).toBe(404);
    expect((await api.request('/api/users/7d444840-9dc0-11d1-b245-5ffdce74fad2')).status).toBe(404);
  });

  it('consent defaults to not opted in; opting in and allowing proactive messages set their timestamps', async () => {
    const userId = await newUser(api);
    const initial = await json(await api.request(`/api/users/${userId}/consents/sms`), 200);
    expect(initial).toMatchObject({ consent_id: null, opted_in: false, proactive_allowed: false });
    const optedIn = await json(await api.request(`/api/users/${userId}/consents/sms`, { method: 'PUT', json: { opted_in: true, consent_source: 'sms_reply' } }), 200);
    expect(optedIn).toMatchObject({ opted_in: true, consent_source: 'sms_reply', proactive_allowed: false });
    expect(optedIn.opted_in_at).toBeTruthy();
    const proactive = await json(await api.request(`/api/users/${userId}/consents/sms`, { method: 'PUT', json: { proactive_allowed: true } }), 200);
    expect(proactive).toMatchObject({ consent_id: optedIn.consent_id, opted_in: true, proactive_allowed: true });
    expect(proactive.proactive_allowed_at).toBeTruthy();
    const out = await json(await api.request(`/api/users/${userId}/consents/sms`, { method: 'PUT', json: { opted_in: false } }), 200);
    expect(out).toMatchObject({ opted_in: false, proactive_allowed: false, proactive_allowed_at: null });
    expect(out.opted_out_at).toBeTruthy();
    const list = await json(await api.request(`/api/users/${userId}/consents`), 200);
    expect(list.consents).toHaveLength(1);
  });

  it('consent is unique per user and channel type, and proactive messages need an opt-in', async () => {
    const userId = await newUser(api);
    await Promise.all(['chat', 'chat', 'voice'].map((c) => api.request(`/api/users/${userId}/consents/${c}`, { method: 'PUT', json: { opted_in: true } })));
    const list = await json(await api.request(`/api/users/${userId}/consents`), 200);
    expect(list.consents.map((c: { channel_type: string }) => c.channel_type)).toEqual(['chat', 'voice']);
    const refused = await api.request(`/api/users/${userId}/consents/email`, { method: 'PUT', json: { proactive_allowed: true } });
    expect(refused.status).toBe(400);
    expectFieldError(await refused.json(), 'body.proactive_allowed');
    const badChannel = await api.request(`/api/users/${userId}/consents/Fax!`, { method: 'PUT', json: { opted_in: true } });
    expect(badChannel.status).toBe(400);
    expectFieldError(await badChannel.json(), 'params.channel_type');
    expect((await api.request(`/api/users/7d444840-9dc0-11d1-b245-5ffdce74fad2/consents/sms`)).status).toBe(404);
  });
});
