/** Request and response schemas of the messaging-app routes (the shapes domain code also needs stay in shared/channels/chatapp/chatapp.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { chatappMessageSchema } from '../../shared/channels/chatapp/chatapp.schemas.js';
import { templateSendBody, twilioForm } from './channels.schemas.js';

export const inboundParams = twilioForm('Twilio WhatsApp webhook parameters; MessageSid and From are required (checked after the signature).');
export const statusParams = twilioForm('Twilio status callback parameters; MessageSid and MessageStatus are required (checked after the signature).');

export const templateSendSchema = templateSendBody.openapi('ChatappTemplateSend');

export const messageParams = z.object({ message_id: uuid() });
export const messageQuery = z
  .object({
    user_id: uuid().optional(),
    phone_number: z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be E.164').optional(),
    direction: z.enum(['inbound', 'outbound']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .refine((q) => q.user_id || q.phone_number, { path: ['user_id'], message: 'user_id or phone_number is required' });
export const messageList = z.object({ messages: z.array(chatappMessageSchema) });
