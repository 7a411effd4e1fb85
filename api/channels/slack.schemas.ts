/** Request and response schemas of the Slack request URLs (events and interactions). */
import { z } from '../../shared/zod.js';

/** An Events API body as Slack sends it; parsed as an envelope once the signature is checked. */
export const slackEventsBody = z.record(z.string(), z.unknown()).openapi({ description: 'An Events API envelope (url_verification or event_callback), JSON as Slack sends it.' });
export const slackEventsAnswer = z.object({ challenge: z.string().optional() });

/** An interaction as Slack posts it: form fields, the payload JSON in `payload` (parsed once the signature is checked). */
export const slackInteractionForm = z.record(z.string(), z.string()).openapi({ description: 'Form fields as Slack sends them: `payload`, the interaction payload JSON (checked after the signature).' });
/** Slack wants an empty 200 within 3 seconds; the work is queued. */
export const slackAck = z.object({});

/** A link request's one-use token (GET /slack/link?token=…, and the confirming form). */
const linkToken = z.string().min(1).max(100);
export const slackLinkQuery = z.object({ token: linkToken });
export const slackLinkForm = z.object({ token: linkToken, csrf_token: z.string().min(1).max(200) });
/** An HTML page, as OpenAPI shows it. */
export const htmlPage = z.string();
