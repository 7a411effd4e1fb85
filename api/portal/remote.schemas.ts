/** Response schemas of the portal's views of other services (history, automations). */
import { z, uuid } from '../../shared/zod.js';

/** Whether the other service answered: part of every answer, so a screen can show the error. */
const connectionSchema = z
  .object({
    state: z.enum(['connected', 'failed', 'not_configured']),
    error: z.string().nullable().openapi({ description: 'why the service could not be reached or answered an error' }),
  })
  .openapi('PortalConnection');

const historyRow = z
  .object({
    session_id: z.string(),
    channel: z.string().nullable().openapi({ description: 'slack, voice, web, siri… (any lowercase channel name); the screen shows an icon for slack, voice, web and siri and a generic one otherwise' }),
    created_at: z.string(),
    message_count: z.number().int(),
    summary: z.string().nullable(),
    status: z.string(),
  })
  .openapi('HistoryRow');
export const historyList = z.object({ connection: connectionSchema, sessions: z.array(historyRow) });
export const historyParams = z.object({ session_id: uuid() });
export const historyConversation = historyRow.extend({ messages: z.array(z.object({ role: z.string(), content: z.string(), channel: z.string().optional() })) }).openapi('HistoryConversation');

export const automationList = z.object({
  connection: connectionSchema,
  executions: z.array(
    z.object({ id: z.string(), workflowName: z.string(), status: z.enum(['success', 'failed', 'running']), startedAt: z.string().nullable(), stoppedAt: z.string().nullable() }).openapi('AutomationExecution'),
  ),
});
