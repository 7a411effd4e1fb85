/** Request and response schemas of the portal's web chat routes. */
import { z, uuid } from '../../shared/zod.js';
import { eventTypes, historyMessageSchema } from '../../shared/sessions/sessions.schemas.js';
import { webChatRequestSchema } from '../../shared/channels/webchat.js';
import { userHeader } from './common.schemas.js';

/** One event of the stream (each `data:` line), as spec 000 § Events names it; the web chat shows role, content and channel of MESSAGE. */
export const sessionEventEnvelope = z
  .object({
    event_type: z.enum(eventTypes),
    session_id: z.string(),
    channel: z.string().openapi({ description: 'the channel that published it (never `chat` on this stream)' }),
    data: z.record(z.string(), z.unknown()).openapi({
      description: 'MESSAGE: {role, content, interaction_id, metadata}; the final event of a closed session: CONTEXT_UPDATE {session_status: "closed", reason}',
    }),
  })
  .openapi('SessionEventEnvelope');

/** A message of the conversation as the session context has it, with its id. */
const chatMessageSchema = historyMessageSchema.extend({ message_id: uuid() }).openapi('PortalChatMessage');
export const portalChat = z.object({ session_id: z.string().nullable(), messages: z.array(chatMessageSchema) }).openapi('PortalChat');
/** POST /api/chat's body without `user_id`: the caller is the user. */
export const chatRequest = webChatRequestSchema.omit({ user_id: true }).strict();

export const chatStreamHeaders = userHeader.extend({ 'last-event-id': z.string().regex(/^\d+$/, 'must be a sequence number').optional() });
export const chatStreamParams = z.object({ session_id: uuid() });
export const chatStreamQuery = z.object({ last_event_id: z.coerce.number().int().min(0).optional() });
