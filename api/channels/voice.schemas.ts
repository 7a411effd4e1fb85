/** Request schemas of the voice routes. */
import { z } from '../../shared/zod.js';
import { twilioForm } from './channels.schemas.js';

export const voiceWebhookParams = twilioForm('Twilio Voice webhook parameters; CallSid and From are required (checked after the signature).');
/** The parameters /voice/incoming reads, parsed once the signature is checked (the others are kept). */
export const callParamsSchema = z.object({ CallSid: z.string().min(1).max(64), From: z.string().min(1).max(64), To: z.string().max(64).optional() }).catchall(z.string());
