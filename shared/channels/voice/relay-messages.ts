/**
 * Twilio ConversationRelay's WebSocket messages, as its documentation lists them. From Twilio: setup
 * (once, first), prompt (the caller's transcribed speech; `last` false for partial results), interrupt
 * (the caller spoke over the reply: what was heard until then), dtmf (a keypad digit), error. To
 * Twilio: text tokens to speak (`last: true` ends the reply) and end (hang up).
 */
import { z } from '../../zod.js';

export const relayInboundSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('setup'),
    sessionId: z.string(),
    callSid: z.string().min(1).max(64),
    accountSid: z.string().optional(),
    from: z.string(),
    to: z.string().optional(),
    direction: z.string().optional(),
    customParameters: z.record(z.string(), z.string()).optional(),
  }),
  z.looseObject({ type: z.literal('prompt'), voicePrompt: z.string(), lang: z.string().optional(), last: z.boolean().default(true) }),
  z.looseObject({ type: z.literal('interrupt'), utteranceUntilInterrupt: z.string().default(''), durationUntilInterruptMs: z.number().optional() }),
  z.looseObject({ type: z.literal('dtmf'), digit: z.string().min(1).max(1) }),
  z.looseObject({ type: z.literal('error'), description: z.string().default('') }),
]);
export type RelayInbound = z.output<typeof relayInboundSchema>;

export type RelayOutbound = { type: 'text'; token: string; last: boolean; interruptible?: boolean } | { type: 'end'; handoffData?: string };
