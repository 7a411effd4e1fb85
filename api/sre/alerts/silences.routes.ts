/** /api/v1/alerts/silences: silence alerts by label matchers for a time range (Alertmanager semantics). */
import { ApiRouter } from '../../routing.js';
import { createSilence, expireSilence, getSilence } from '../../../shared/sre/silences/silences.js';
import { listSilences, silencedAlertCount } from '../../../shared/sre/silences/silence.store.js';
import { idParams } from '../common.schemas.js';
import * as s from './silences.schemas.js';

const tags = ['alerts'];
const semantics = [
  'Matchers as in Alertmanager: `=`, `!=`, `=~`, `!~`; regular expressions are anchored (`^(value)$`) and a missing label matches `""`.',
  'An alert (of any source) whose labels satisfy every matcher while the silence is active (starts_at ≤ now < ends_at) is still',
  'recorded and deduplicated and is listed with `silenced: true` and the silence ids in `silenced_by`, but it opens no incident and',
  'starts no runbook automatically. If it still fires when the silence ends, the next alerts tick (within 30 s) automates it as if it had just fired.',
  'Silences expire by themselves at ends_at (state `expired`); POST …/expire ends one early.',
].join(' ');

export function silenceRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'post',
      path: '/api/v1/alerts/silences',
      tags,
      summary: 'Create a silence',
      description: `${semantics}\n\nRules: at least one matcher; the matchers must not match every alert (an alert without labels); ends_at after starts_at (default now) and in the future; regexes must compile. \`created_by\` and \`comment\` are required, as in Alertmanager.`,
      auth: 'key-or-sre',
      request: { body: s.silenceCreate },
      responses: { 201: { description: 'the silence', schema: s.silence } },
      handler: ({ body }) => createSilence(body),
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/silences',
      tags,
      summary: 'List silences',
      description: `Newest first; \`state\` (comma-separated pending, active, expired) is computed from the clock. ${semantics}`,
      auth: 'key-or-sre',
      request: { query: s.silenceQuery },
      responses: { 200: { description: 'a page of silences', schema: s.silencePage } },
      handler: ({ query }) => listSilences(query),
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/silences/{id}',
      tags,
      summary: 'Get a silence with the number of alerts it silences now',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the silence', schema: s.silenceDetail } },
      handler: async ({ params }) => ({ ...(await getSilence(params.id)), silenced_alerts: await silencedAlertCount(params.id) }),
    })
    .route({
      method: 'post',
      path: '/api/v1/alerts/silences/{id}/expire',
      tags,
      summary: 'End a silence early',
      description: 'Sets ends_at to now (a pending silence also gets starts_at now) and records `ended_by`. Alerts it covered are automated by the next alerts tick if they still fire.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.endSilenceBody },
      responses: { 200: { description: 'the silence, now expired', schema: s.silence } },
      errors: { 409: 'The silence has already expired' },
      handler: ({ params, body }) => expireSilence(params.id, body.by),
    });
}
