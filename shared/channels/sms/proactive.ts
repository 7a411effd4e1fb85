/**
 * Proactive SMS: the chatapp templates rendered as text, sent where the user's `sms` consent has
 * opted_in and proactive_allowed. SMS has no 24-hour window, so consent is the only rule.
 */
import { ConflictError, ForbiddenError } from '../../errors.js';
import { enqueue } from '../../queues.js';
import { config } from '../../config.js';
import { getUser } from '../../users/users.store.js';
import { getConsent } from '../../users/consents.store.js';
import { renderTemplate } from '../chatapp/templates.js';
import { insertOutbound, type ChannelMessage } from '../messages.store.js';
import { SMS } from './sms.adapter.js';

/** Accepts a proactive template SMS: 400 bad template/variables, 404 unknown user, 409 no phone number, 403 naming the missing consent. */
export async function acceptSmsTemplate(input: { user_id: string; template_name: string; variables: Record<string, string> }): Promise<ChannelMessage> {
  const rendered = renderTemplate(input.template_name, input.variables);
  const user = await getUser(input.user_id);
  if (!user.phone_number) throw new ConflictError(`User ${input.user_id} has no phone number.`, [], { rule: 'phone_number_required' });
  const consent = await getConsent(user.user_id, SMS);
  const missing = [!consent.opted_in && 'opted_in', !consent.proactive_allowed && 'proactive_allowed'].filter((m): m is string => Boolean(m));
  if (missing.length) {
    throw new ForbiddenError(`Proactive SMS need the user's sms consent with opted_in and proactive_allowed; missing: ${missing.join(', ')}.`, [], { missing_consent: missing, channel_type: SMS });
  }
  const message = await insertOutbound({
    channel: SMS,
    remote_address: user.phone_number,
    local_address: config().channels.sms.from ?? null,
    body: rendered.text,
    user_id: user.user_id,
    metadata: { template_name: rendered.name },
  });
  await enqueue('channels.send', { message_id: message.message_id });
  return message;
}
