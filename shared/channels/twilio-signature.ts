/** The X-Twilio-Signature check of the sms and voice channels' webhooks and of the call relay socket. */
import { config } from '../config.js';
import { ForbiddenError, ValidationError } from '../errors.js';
import { validTwilioRequest } from '../clients/twilio-channels.js';

type RequestUrl = { protocol: string; host: string; originalUrl: string };

/** The URL the provider called, as it signed it: CHANNELS_PUBLIC_URL + path, else rebuilt from the (forwarded) protocol and host. */
export function channelUrl(request: RequestUrl, scheme: 'http' | 'ws' = 'http'): string {
  const base = config().channels.publicUrl ?? `${request.protocol}://${request.host}`;
  const url = `${base}${request.originalUrl}`;
  return scheme === 'ws' ? url.replace(/^http/, 'ws') : url;
}

/** Verifies X-Twilio-Signature: missing → 400, wrong → 403 (callers check the channel is configured first). */
export function verifyTwilioSignature(signature: string | undefined, url: string, params: Record<string, string>): void {
  if (!signature) throw new ValidationError('The X-Twilio-Signature header is missing.', [{ path: 'headers.x-twilio-signature', message: 'required' }]);
  if (!validTwilioRequest(signature, url, params)) throw new ForbiddenError('The X-Twilio-Signature does not match this request.');
}
