/** Request schemas of the sms routes. */
import { templateSendBody, twilioForm } from './channels.schemas.js';

export const smsWebhookParams = twilioForm('Twilio Messaging webhook parameters; MessageSid, From and To are required (checked after the signature).');
export const smsTemplateSend = templateSendBody.openapi('SmsTemplateSend');
