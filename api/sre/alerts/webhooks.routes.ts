/** POST /webhooks/alertmanager/{source} and /webhooks/grafana/{source}: what the senders POST, validated and queued. */
import { UnauthorizedError } from '../../../shared/errors.js';
import type { Context } from 'koa';
import { ApiRouter } from '../../routing.js';
import { acceptWebhook } from '../../../shared/sre/alerts/ingest.js';
import { authenticateSource, type AuthenticatedSource, type SourceKind } from '../../../shared/sre/alerts/alert-source.store.js';
import { alertmanagerPayload, grafanaPayload, isPlainAlertmanagerPayload } from '../../../shared/sre/alerts/payloads.js';
import { basicCredentials } from '../../middleware/auth.js';
import { webhookAccepted, webhookParams } from './webhooks.schemas.js';

/** The secret a sender presents: a bearer token or a basic-auth password (both senders can send either). */
function presentedSecret(ctx: Context): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  return bearer?.[1]?.trim() ?? basicCredentials(ctx)?.password;
}

const description = (sender: string) => `Receives the ${sender}. Decisions the spec leaves open:
- The secret of the source is checked first: \`Authorization: Bearer <secret>\` or basic auth with the secret as password (any user). A source without its own secret uses ALERT_WEBHOOK_TOKEN; when that is unset too (development and tests only; production refuses to start without it) no secret is needed. Wrong or missing → 401; unknown or disabled source → 404.
- The body is validated (unknown fields are ignored); malformed → 400 naming each field. Nothing is written synchronously: the payload is queued and 202 is answered; a worker deduplicates each alert by the sender's fingerprint (computed like Alertmanager's from the labels when absent) into one open instance per source and fingerprint.
- A resolved alert with no open instance is ignored (there is nothing to resolve).
- A retry is counted once. The same body (the exact bytes) from the same source received less than ALERT_RETRY_WINDOW (default 60 s) after the first attempt adds nothing: when the sender repeats a POST (e.g. after a 503 or a timeout that hid a successful enqueue), its alerts count once, whichever attempt the worker writes first. \`payload_id\` is derived from the source, the body and the aligned window the request arrived in, so a retry within the same window answers the same \`payload_id\`; a retry just across a window boundary answers the next window's id, whose row records the attempt that counted (\`retry_of\`). The same body a full window after the first attempt is a new notification and counts: Alertmanager re-sends an unchanged group (same bytes, firing alerts keep the zero \`endsAt\`) only after max(group_interval, repeat_interval), while it retries a failed POST within seconds. A different body (another alert, a changed annotation or value) always counts.`;

export function webhookRoutes(): ApiRouter {
  const router = new ApiRouter();
  // Authenticate before validating, so callers without the secret learn nothing about the payload format.
  router.koa.use('/webhooks/:kind/:source', async (ctx, next) => {
    // Routes match in any letter case: so must this check, or /webhooks/ALERTMANAGER/… would skip it.
    const kind = ctx.params.kind!.toLowerCase() as SourceKind;
    if (ctx.method === 'POST' && (kind === 'alertmanager' || kind === 'grafana')) {
      ctx.state.alertSource = await authenticateSource(kind, ctx.params.source!, presentedSecret(ctx));
    }
    await next();
  });
  for (const [kind, schema, sender, acceptsBody] of [
    ['alertmanager', alertmanagerPayload, 'Alertmanager webhook notification (payload version "4", as sent by a `webhook_configs` receiver)', isPlainAlertmanagerPayload],
    ['grafana', grafanaPayload, 'Grafana unified alerting webhook notification (contact point of type webhook)', undefined],
  ] as const) {
    router.route({
      method: 'post',
      path: `/webhooks/${kind}/{source}`,
      tags: ['alert webhooks'],
      summary: `Ingest a ${kind} webhook`,
      description: description(sender),
      auth: 'public',
      request: { params: webhookParams, body: schema, acceptsBody },
      responses: { 202: { description: 'queued', schema: webhookAccepted } },
      errors: { 401: 'Missing or wrong source secret', 404: 'No enabled source of that name' },
      // The JSON body parser keeps the text it parsed: the payload id hashes it as sent.
      handler: async ({ body }, ctx) => {
        // Fail closed: a request that reached here without passing the source check is refused.
        if (!ctx.state.alertSource) throw new UnauthorizedError('The alert source secret was not checked.');
        return acceptWebhook(ctx.state.alertSource as AuthenticatedSource, body, (ctx.request as { rawBody: string }).rawBody);
      },
    });
  }
  return router;
}
