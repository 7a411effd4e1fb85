import { describe, expect, it } from 'vitest';
import { inboundText, parseInbound, phoneOf } from '../../../shared/channels/chatapp/inbound.js';
import { ValidationError } from '../../../shared/errors.js';

describe('inbound WhatsApp parameters', () => {
  it('unknown parameters are tolerated and the phone is the E.164 part of From', () => {
    const p = parseInbound({ MessageSid: 'SM1', From: 'whatsapp:+14155550100', Body: 'hi', Foo: 'bar', ChannelMetadata: '{}' });
    expect(p.Foo).toBe('bar');
    expect(phoneOf(p.From)).toBe('+14155550100');
  });

  it('media and tapped buttons become the message text', () => {
    const media = parseInbound({ MessageSid: 'SM2', From: 'whatsapp:+14155550100', Body: '', NumMedia: '2', MediaUrl0: 'https://api.twilio.com/m/0', MediaUrl1: 'https://api.twilio.com/m/1' });
    expect(inboundText(media)).toBe('[2 attachments: https://api.twilio.com/m/0 https://api.twilio.com/m/1]');
    const captioned = parseInbound({ MessageSid: 'SM3', From: 'whatsapp:+14155550100', Body: 'look', NumMedia: '1', MediaUrl0: 'https://api.twilio.com/m/0' });
    expect(inboundText(captioned)).toBe('look\n[1 attachment: https://api.twilio.com/m/0]');
    const button = parseInbound({ MessageSid: 'SM4', From: 'whatsapp:+14155550100', Body: '', ButtonText: 'Yes', ButtonPayload: 'confirm_yes' });
    expect(inboundText(button)).toBe('Yes');
  });

  it('a missing MessageSid or a From that is not whatsapp:+E164 is a 400 naming each', () => {
    const error = (() => {
      try {
        parseInbound({ From: '0155' });
      } catch (e) {
        return e as ValidationError;
      }
    })()!;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.errors.map((e) => e.path).sort()).toEqual(['body.From', 'body.MessageSid']);
  });
});
