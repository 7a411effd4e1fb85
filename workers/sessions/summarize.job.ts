/** sessions.summarize: the model's summary of a session that went idle or closed; running twice writes it twice. */
import type { JobHandler } from '../runner.js';
import { summarizeSession } from '../../shared/sessions/summary.js';

export const summarizeJob: JobHandler<'sessions.summarize'> = (payload) => summarizeSession(payload.session_id);
