import { describe, expect, it } from 'vitest';
import { statusCallbackUrl } from '../../../shared/channels/twilio-signature.js';

describe('the status-callback URL sent to the provider', () => {
  it.each([
    ['https://hooks.example.com/chatapp/webhook', 'https://hooks.example.com/chatapp/status'],
    ['https://hooks.example.com/chatapp/webhook/', 'https://hooks.example.com/chatapp/status'],
    ['https://hooks.example.com/chatapp/webhook//', 'https://hooks.example.com/chatapp/status'],
  ])('CHATAPP_PUBLIC_URL %s gives %s', (publicUrl, expected) => {
    expect(statusCallbackUrl(publicUrl)).toBe(expected);
  });
});
