/**
 * Outbound messaging-app messages: the channel's rules are checked when a message is accepted
 * (template and variables, consent for proactive sends, the 24-hour customer window for free-form
 * messages, rich-message limits in the schema), the message is recorded as queued, and a
 * `channels.send` job delivers it through the provider with the queue's retries.
 */
import { config } from '../../config.js';
import { ConflictError, ForbiddenError, ValidationError, fieldErrors } from '../../errors.js';
import { enqueue } from '../../queues.js';
import { chatappClient, describeProviderError, isTransientProviderError, type ProviderMessage, type ProviderReceipt, type RichContent } from '../../clients/twilio.js';
import { logger } from '../../logger.js';
import { PermanentSendError } from '../contract.js';
import { getUser } from '../../users/users.store.js';
import { getConsent } from '../../users/consents.store.js';
import { renderTemplate } from './templates.js';
import { statusCallbackUrl } from '../twilio-signature.js';
import { windowOpen } from './window.store.js';
import { getMessage, insertOutbound, insertReplyOnce, markAttemptFailed, markSending, markSent, recordedProviderIds, type StoredMessage } from './messages.store.js';
import { sessionMessageSchema, type SessionMessageInput } from './chatapp.schemas.js';

export const CHANNEL = 'chatapp';

/** The settings the messaging app still needs: the Twilio account and its sender number (none: it is live). */
export function chatappMissingSettings(): string[] {
  const { channels, chatapp } = config();
  return [!channels.twilio.accountSid && 'TWILIO_ACCOUNT_SID', !channels.twilio.authToken && 'TWILIO_AUTH_TOKEN', !chatapp.fromNumber && 'CHATAPP_FROM_NUMBER'].filter((s): s is string => Boolean(s));
}

/** The address of a phone number at the provider (WhatsApp). */
export const providerAddress = (phone: string) => `whatsapp:${phone}`;

/** The user a message goes to (NotFoundError for an unknown user). */
/** The user a message goes to; one without a phone number (signed in to the portal only) cannot be messaged. */
async function recipient(userId: string) {
  const user = await getUser(userId);
  if (!user.phone_number) throw new ConflictError(`User ${userId} has no phone number: set one in the portal profile first.`, [], { rule: 'phone_number_required' });
  return { ...user, phone_number: user.phone_number };
}

/**
 * Accepts a proactive template message: 400 for an unknown template or variables that do not fit
 * it, 404 for an unknown user, 403 naming the missing consent (opted_in, proactive_allowed).
 */
export async function acceptTemplateSend(input: { user_id: string; template_name: string; variables: Record<string, string> }): Promise<StoredMessage> {
  const rendered = renderTemplate(input.template_name, input.variables);
  const user = await recipient(input.user_id);
  const consent = await getConsent(input.user_id, CHANNEL);
  const missing = [!consent?.opted_in && 'opted_in', !consent?.proactive_allowed && 'proactive_allowed'].filter((m): m is string => Boolean(m));
  if (missing.length) {
    throw new ForbiddenError(
      `Proactive messages need the user's chatapp consent with opted_in and proactive_allowed; missing: ${missing.join(', ')}.`,
      [],
      { missing_consent: missing, channel_type: CHANNEL },
    );
  }
  await assertTemplateSendable(rendered.name, user.phone_number);
  const message = await insertOutbound({
    user_id: user.user_id,
    phone_number: user.phone_number,
    kind: 'template',
    template_name: rendered.name,
    variables: input.variables,
    body: rendered.text,
  });
  await queueSend(message);
  return message;
}

/** The 409 for a template that would go out as free text outside the customer window (the provider refuses those). */
function unapprovedOutsideWindow(template: string): ConflictError {
  return new ConflictError(
    `Outside the 24-hour customer window only approved templates may be sent, and template ${template} has no approved Content SID: set it in CHATAPP_TEMPLATE_SIDS (${template}=HX…), or send while the window is open.`,
    [],
    { rule: 'approved_template_outside_window', missing_setting: 'CHATAPP_TEMPLATE_SIDS', template_name: template },
  );
}

/** A template without an approved Content SID is sent as free text, which only the open customer window allows. */
async function assertTemplateSendable(template: string, phone: string): Promise<void> {
  if (!config().chatapp.templateSids[template] && !(await windowOpen(phone))) throw unapprovedOutsideWindow(template);
}

/**
 * Accepts a free-form (session) message, plain or rich. Allowed only inside the user's 24-hour
 * customer window (409 naming the rule otherwise); rich-message limits are enforced by its schema.
 */
export async function acceptSessionMessage(raw: SessionMessageInput): Promise<StoredMessage> {
  const parsed = sessionMessageSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError('The message is invalid.', fieldErrors('body', parsed.error.issues));
  const input = parsed.data;
  const user = await recipient(input.user_id);
  if (!(await windowOpen(user.phone_number))) {
    throw new ConflictError(
      'Outside the 24-hour customer window (24 hours from the user\'s latest inbound message) only approved templates may be sent: use POST /api/chatapp/send.',
      [],
      { rule: 'customer_window_24h' },
    );
  }
  const content = input.buttons ? { buttons: input.buttons } : input.list ? { list: input.list } : null;
  const message = await insertOutbound({
    user_id: user.user_id,
    phone_number: user.phone_number,
    kind: input.buttons ? 'buttons' : input.list ? 'list' : 'text',
    body: input.text,
    content,
  });
  await queueSend(message);
  return message;
}

/** Records the reply to an inbound message once (a repeat returns the first record, body included). */
export function recordReply(reply: { reply_to: string; phone_number: string; body: string; user_id: string | null; session_id: string | null }): Promise<StoredMessage> {
  return insertReplyOnce({ ...reply, kind: 'text' });
}

/** Queues a recorded message for sending, on the channels' one send job (a repeat is a no-op while the first job is kept). */
export async function queueSend(message: StoredMessage): Promise<void> {
  await enqueue('channels.send', { message_id: message.message_id, channel: CHANNEL });
}

async function providerMessage(message: StoredMessage): Promise<ProviderMessage> {
  const callback = statusCallbackUrl();
  return { ...(await providerContent(message)), ...(callback ? { statusCallback: callback } : {}) };
}

async function providerContent(message: StoredMessage): Promise<ProviderMessage> {
  const to = providerAddress(message.phone_number);
  if (message.kind === 'template') {
    const contentSid = config().chatapp.templateSids[message.template_name!];
    if (contentSid) return { to, contentSid, contentVariables: renderTemplate(message.template_name!, message.variables ?? {}).contentVariables };
    // The window may have closed since the message was accepted: refused here rather than by the provider.
    await assertTemplateSendable(message.template_name!, message.phone_number);
    return { to, body: message.body! };
  }
  if (message.kind === 'buttons' || message.kind === 'list') {
    const content = message.content as { buttons?: Array<{ id: string; title: string }>; list?: { button: string; items: Array<{ id: string; item: string; description?: string }> } };
    const rich: RichContent = content.buttons
      ? { kind: 'buttons', body: message.body!, buttons: content.buttons }
      : { kind: 'list', body: message.body!, button: content.list!.button, items: content.list!.items };
    return { to, contentSid: await chatappClient().richContentSid(rich) };
  }
  return { to, body: message.body! };
}

/** How far the provider's clock may be behind ours when a lost send is looked up by its creation time. */
const providerClockSkewMs = 2 * 60_000;

/** Whether a message goes out as its recorded body (so a lookup can match the body): text, or a template without an approved Content SID. */
const sentAsBody = (message: StoredMessage) => message.kind === 'text' || (message.kind === 'template' && !config().chatapp.templateSids[message.template_name!]);

/**
 * The provider's record of a send whose answer was lost: a message to the recipient created since
 * the first attempt began, with the same body when it went out as text, not already recorded on
 * another message. Undefined when the provider has none (the earlier attempts were not accepted).
 */
async function earlierSend(message: StoredMessage): Promise<ProviderReceipt | undefined> {
  const since = new Date(message.send_started_at!.getTime() - providerClockSkewMs);
  const found = await chatappClient().findSent(providerAddress(message.phone_number), since, sentAsBody(message) ? message.body! : undefined);
  const taken = await recordedProviderIds(found.map((f) => f.sid));
  const candidates = found.filter((f) => !taken.has(f.sid));
  // Newest first: the earliest is the first attempt that got through.
  const adopted = candidates.at(-1);
  if (candidates.length > 1) logger('chatapp').warn({ message_id: message.message_id, sids: candidates.map((c) => c.sid) }, 'the provider holds more than one copy of a message; adopting the first');
  return adopted;
}

/**
 * Delivers one recorded message (the `channels.send` job with channel chatapp). A message already sent is not sent again.
 * The intent (status sending) is recorded before the provider is called; a retry of a message left
 * sending first looks it up at the provider and adopts the provider's id instead of sending again.
 * Transient provider failures are recorded and rethrown for the queue to retry; a refusal marks the
 * message failed and throws PermanentSendError.
 */
export async function deliver(messageId: string, finalAttempt: boolean): Promise<StoredMessage | undefined> {
  const message = await getMessage(messageId);
  if (!message || message.direction !== 'outbound' || (message.status !== 'queued' && message.status !== 'sending')) return message;
  try {
    const found = message.status === 'sending' ? await earlierSend(message) : undefined;
    if (found) {
      logger('chatapp').info({ message_id: messageId, sid: found.sid }, 'an earlier attempt reached the provider; its message is adopted, not sent again');
      await markSent(messageId, found);
    } else {
      const content = await providerMessage(message);
      await markSending(messageId);
      await markSent(messageId, await chatappClient().send(content));
    }
  } catch (err) {
    // A closed window (ConflictError) will not reopen by retrying.
    const transient = !(err instanceof ConflictError) && isTransientProviderError(err);
    await markAttemptFailed(messageId, describeProviderError(err), finalAttempt || !transient);
    if (!transient) throw new PermanentSendError(describeProviderError(err));
    throw err;
  }
  return getMessage(messageId);
}
