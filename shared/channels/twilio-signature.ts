/**
 * The X-Twilio-Signature check of every Twilio webhook (the sms, voice and messaging-app channels)
 * and of the call relay socket, keyed by the one account's TWILIO_AUTH_TOKEN, and which URL Twilio signed.
 */
import { config } from '../config.js';
import { ForbiddenError, ServiceUnavailableError, ValidationError } from '../errors.js';
import { validTwilioSignature } from '../clients/twilio.js';

type RequestUrl = { protocol: string; host: string; originalUrl: string };

/** The URL the provider called, as it signed it: CHANNELS_PUBLIC_URL + path, else rebuilt from the (forwarded) protocol and host. */
export function channelUrl(request: RequestUrl, scheme: 'http' | 'ws' = 'http'): string {
  const base = config().channels.publicUrl ?? `${request.protocol}://${request.host}`;
  const url = `${base}${request.originalUrl}`;
  return scheme === 'ws' ? url.replace(/^http/, 'ws') : url;
}

/** Whether X-Twilio-Signature is Twilio's for this URL and these parameters. */
export function validTwilioRequest(signature: string, url: string, params: Record<string, string>): boolean {
  return validTwilioSignature(config().channels.twilio.authToken, signature, url, params);
}

/** Verifies X-Twilio-Signature: missing → 400, wrong → 403 (callers check the channel is configured first). */
export function verifyTwilioSignature(signature: string | undefined, url: string, params: Record<string, string>): void {
  if (!signature) throw new ValidationError('The X-Twilio-Signature header is missing.', [{ path: 'headers.x-twilio-signature', message: 'required' }]);
  if (!validTwilioRequest(signature, url, params)) throw new ForbiddenError('The X-Twilio-Signature does not match this request.');
}

// --- the messaging app's URLs (CHATAPP_PUBLIC_URL) --------------------------------------

/** The URL the provider called, as it signed it: CHATAPP_PUBLIC_URL, else rebuilt from the (forwarded) protocol and host. */
export function signedUrl(request: RequestUrl): string {
  return config().chatapp.publicUrl ?? `${request.protocol}://${request.host}${request.originalUrl}`;
}

/**
 * Public URL of POST /chatapp/status beside the webhook's (CHATAPP_PUBLIC_URL); none without it.
 * A trailing slash on the webhook URL would make `status` resolve below it (…/webhook/status), so it is dropped first.
 */
export function statusCallbackUrl(publicUrl = config().chatapp.publicUrl): string | undefined {
  if (!publicUrl) return undefined;
  const webhook = new URL(publicUrl);
  webhook.pathname = webhook.pathname.replace(/\/+$/, '') || '/';
  return new URL('status', webhook).toString();
}

/** The URL a status callback was signed for: the one we gave the provider, else rebuilt from the request. */
export function signedStatusUrl(request: RequestUrl): string {
  return statusCallbackUrl() ?? `${request.protocol}://${request.host}${request.originalUrl}`;
}

/** Verifies a messaging-app request's X-Twilio-Signature: missing → 400, wrong → 403; 503 when no auth token is configured to check it. */
export function verifySignature(signature: string | undefined, url: string, params: Record<string, string>): void {
  if (!config().channels.twilio.authToken) throw new ServiceUnavailableError('The messaging-app webhook cannot verify requests: TWILIO_AUTH_TOKEN is not set.');
  verifyTwilioSignature(signature, url, params);
}
