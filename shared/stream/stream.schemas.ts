/** What travels through the session stream's lanes: accepted events, as the API enqueues them and the worker parses them. */
import { z, uuid } from '../zod.js';
import { channelSchema, eventTypes, jsonObject, roleSchema } from '../sessions/sessions.schemas.js';

/** One accepted event of a session's stream: a message, or another event kind of the spec. */
export const streamEventSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('message'),
    session_id: uuid(),
    message_id: uuid(),
    channel: channelSchema,
    role: roleSchema,
    content: z.string(),
    interaction_id: uuid().nullable(),
    metadata: jsonObject,
    idempotency_key: z.string().nullable(),
  }),
  z.object({
    kind: z.literal('event'),
    session_id: uuid(),
    event_id: uuid(),
    event_type: z.enum(eventTypes),
    channel: channelSchema,
    interaction_id: uuid().nullable(),
    data: jsonObject,
  }),
  /**
   * The final event of an erased session, at the sequence the erasure took while it held the session's
   * row: published in its place in the session's order, after every event accepted before it, and
   * written nowhere (the session's rows are gone).
   */
  z.object({
    kind: z.literal('erased'),
    session_id: uuid(),
    event_id: uuid(),
    channel: channelSchema,
    sequence: z.number().int().min(1),
    reason: z.string(),
  }),
]);
export type StreamEvent = z.infer<typeof streamEventSchema>;

/** Most events one lane job carries (and one request puts into a session's stream at once: a final_history sync). */
export const maxEventsPerJob = 1_000;

/** stream.deliver: events accepted into sessions of one lane, each session's in acceptance order. */
export const deliverSchema = z.object({ events: z.array(streamEventSchema).min(1).max(maxEventsPerJob) });

/** The id an event is known by: a message's message_id, else its event_id. */
export const eventIdOf = (e: StreamEvent) => (e.kind === 'message' ? e.message_id : e.event_id);

/** The final event of a closed session: CONTEXT_UPDATE {session_status: closed, reason} (streams end after it). */
export const finalEventData = (reason: string) => ({ session_status: 'closed', reason });
