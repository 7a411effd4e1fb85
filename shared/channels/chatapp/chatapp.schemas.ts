/** Shapes of the messaging-app channel shared by the API, the jobs and the domain code (route-only schemas: api/channels/chatapp.schemas.ts). */
import { z, uuid } from '../../zod.js';

/** WhatsApp limits the spec names: buttons per rich message and entries per list. */
export const MAX_BUTTONS = 3;
export const MAX_LIST_ITEMS = 10;

const e164 = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +14155550100');

const button = z.object({ id: z.string().min(1).max(200), title: z.string().min(1).max(20) });
const listItem = z.object({ id: z.string().min(1).max(200), item: z.string().min(1).max(24), description: z.string().max(72).optional() });

/** A session (free-form) message: text, text with quick-reply buttons, or a list picker. */
export const sessionMessageSchema = z
  .object({
    user_id: uuid(),
    text: z.string().min(1).max(4096),
    buttons: z.array(button).min(1).max(MAX_BUTTONS, `at most ${MAX_BUTTONS} buttons per rich message`).optional(),
    list: z
      .object({
        button: z.string().min(1).max(20),
        items: z.array(listItem).min(1).max(MAX_LIST_ITEMS, `at most ${MAX_LIST_ITEMS} list entries per rich message`),
      })
      .optional(),
  })
  .refine((m) => !(m.buttons && m.list), { path: ['list'], message: 'a message has either buttons or a list, not both' })
  .openapi('ChatappSessionMessage');
export type SessionMessageInput = z.output<typeof sessionMessageSchema>;

export const messageKinds = ['text', 'template', 'buttons', 'list'] as const;
export const messageStatuses = ['received', 'processed', 'queued', 'sending', 'sent', 'failed'] as const;

export const chatappMessageSchema = z
  .object({
    message_id: uuid(),
    direction: z.enum(['inbound', 'outbound']),
    user_id: uuid().nullable(),
    session_id: uuid().nullable(),
    phone_number: e164,
    kind: z.enum(messageKinds),
    body: z.string().nullable().describe('text sent or received (for templates: the rendered text)'),
    template_name: z.string().nullable(),
    variables: z.record(z.string(), z.string()).nullable(),
    content: z.record(z.string(), z.unknown()).nullable().describe('buttons or list of a rich message'),
    status: z.enum(messageStatuses).describe('inbound: received → processed; outbound: queued → sending (handed to the provider, answer pending or lost) → sent (accepted by the provider) | failed (refused, or every retry spent)'),
    provider_message_id: z.string().nullable().describe('MessageSid at the provider'),
    provider_status: z.string().nullable().describe('latest provider status: queued, sent, delivered, read, failed, undelivered (from status callbacks)'),
    error: z.string().nullable(),
    attempts: z.number().int(),
    reply_to: uuid().nullable().describe('inbound message this outbound message answers'),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .openapi('ChatappMessage');
export type ChatappMessage = z.output<typeof chatappMessageSchema>;

export { e164 };
