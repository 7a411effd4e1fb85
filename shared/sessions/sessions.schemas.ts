/** Vocabulary of the session memory service (spec 000), shared by the API, the workers and the chat channel. */
import { intervalPattern } from '../config.js';
import { z, uuid } from '../zod.js';

export const channels = ['voice', 'chat', 'sms', 'slack', 'email', 'chatapp'] as const;
/** The channels spec 000 lists as used; any lowercase name up to 50 characters is accepted (web, siri…). */
export const channelSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,49}$/, `must be a lowercase channel name of up to 50 characters (e.g. ${channels.join(', ')}, web, siri)`)
  .openapi('Channel');
export type Channel = z.infer<typeof channelSchema>;

export const roleSchema = z.enum(['user', 'assistant'], { error: 'must be user or assistant' });
export type Role = z.infer<typeof roleSchema>;

export const sessionStatuses = ['active', 'idle', 'resumable', 'closed'] as const;
export const liveStatuses = ['active', 'idle', 'resumable'] as const;
export type SessionStatus = (typeof sessionStatuses)[number];

/** Event kinds of the envelope's event_type, spelled as the spec does. */
export const eventTypes = ['MESSAGE', 'CONTEXT_UPDATE', 'CHANNEL_JOINED', 'CHANNEL_LEFT', 'TYPING', 'TOOL_CALL', 'TOOL_RESULT'] as const;
export type EventType = (typeof eventTypes)[number];

/** An interval in database syntax ("30 minutes", "24 hours", "7 days"). */
export const intervalSchema = z.string().max(100).regex(intervalPattern, 'must be an interval such as "30 minutes", "24 hours" or "7 days"');

/** E.164 telephone number. */
export const e164Schema = z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 telephone number such as +14155550100');

export const jsonObject = z.record(z.string(), z.unknown());

/** A conversation history entry. */
export const historyMessageSchema = z
  .object({ role: roleSchema, content: z.string(), channel: z.string().optional() })
  .openapi('HistoryMessage');
export type HistoryMessage = z.infer<typeof historyMessageSchema>;

/** A moment as the API sends it (a Date serialises to this ISO 8601 text). */
export const timestamp = z.string().openapi({ format: 'date-time' });

/** A session as the API lists it. */
export const sessionSchema = z
  .object({
    session_id: uuid(),
    user_id: uuid(),
    status: z.enum(sessionStatuses),
    resume_window: z.string().openapi({ example: '24 hours' }),
    created_at: timestamp,
    last_activity: timestamp,
    closed_at: timestamp.nullable(),
  })
  .openapi('Session');

/** A channel interaction on a session. */
export const interactionSchema = z
  .object({
    interaction_id: uuid(),
    session_id: uuid(),
    channel: channelSchema,
    channel_ref: z.string().nullable(),
    status: z.enum(['active', 'closed']),
    started_at: timestamp,
    ended_at: timestamp.nullable(),
    legacy_interaction_id: uuid().nullable(),
    metadata: jsonObject,
  })
  .openapi('Interaction');
export type Interaction = z.output<typeof interactionSchema>;

/** An interaction as closing it reports: the session's status after, and how many final_history entries were appended. */
export const closedInteractionSchema = interactionSchema
  .extend({ session_status: z.enum(sessionStatuses), synced_messages: z.number().int() })
  .openapi('ClosedInteraction');
export type ClosedInteraction = z.output<typeof closedInteractionSchema>;

/** The conversation context of a session. */
export const contextSchema = z
  .object({ conversation_history: z.array(historyMessageSchema), last_channel: z.string().nullable(), preferences: jsonObject, custom_data: jsonObject })
  .openapi('SessionContext');
export type SessionContext = z.output<typeof contextSchema>;

/** What publishing a message reports. */
export const publishResponse = z
  .object({
    success: z.boolean(),
    session_id: uuid(),
    message_published: z.boolean(),
    message_id: uuid(),
    sequence: z.number().int().nullable().openapi({ description: 'Position in the session stream (the SSE id); null while not yet persisted' }),
  })
  .openapi('PublishResult');

/** What publishing a non-message event reports. */
export const eventAcceptedSchema = z
  .object({ success: z.boolean(), session_id: uuid(), event_id: uuid(), event_type: z.string(), published: z.boolean(), sequence: z.number().int().nullable() })
  .openapi('EventAccepted');

/** What a channel publishes as a message. */
export const messageInputSchema = z.object({
  channel: channelSchema,
  role: roleSchema,
  content: z.string().min(1, 'must not be empty').max(32_000, 'must be at most 32000 characters'),
  interaction_id: uuid(),
  metadata: jsonObject.optional(),
});
export type MessageInput = z.infer<typeof messageInputSchema>;

/** The non-message kinds a channel may publish itself, each with its data fields. */
export const clientEventSchema = z.discriminatedUnion('event_type', [
  z.object({ event_type: z.literal('TYPING'), channel: channelSchema, data: z.object({ is_typing: z.boolean() }).passthrough() }),
  z.object({ event_type: z.literal('TOOL_CALL'), channel: channelSchema, data: z.object({ tool_name: z.string().min(1), arguments: z.unknown().optional() }).passthrough() }),
  z.object({ event_type: z.literal('TOOL_RESULT'), channel: channelSchema, data: z.object({ tool_name: z.string().min(1), result: z.unknown().optional() }).passthrough() }),
  z.object({
    event_type: z.literal('CONTEXT_UPDATE'),
    channel: channelSchema,
    data: z
      .object({ preferences: jsonObject.optional(), custom_data: jsonObject.optional() })
      .strict()
      .refine((d) => d.preferences !== undefined || d.custom_data !== undefined, 'must change preferences or custom_data'),
  }),
]);
export type ClientEvent = z.infer<typeof clientEventSchema>;
