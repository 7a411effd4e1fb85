/**
 * Linking a Slack user to a platform user: the bot answers an unlinked Slack user with
 * PUBLIC_URL/slack/link?token=…; the person opens it signed in (else signs in and comes back),
 * sees which Slack user of which workspace asks, and confirms with a POST of the page's form
 * (CSRF-checked). The token is used once and expires after SLACK_LINK_MINUTES.
 */
import type { Context } from 'koa';
import { ApiRouter } from '../routing.js';
import { confirmLink, findLinkRequest } from '../../shared/channels/slack/links.store.js';
import { SLACK_LINK_PATH } from '../../shared/channels/slack/slack.adapter.js';
import { pageAllowed } from '../auth/page-guard.js';
import { sendHtmlPage } from '../auth/error-page.js';
import { personOf } from '../auth/browser-session.js';
import { checkCsrf } from '../middleware/auth.js';
import { portalCaller } from '../portal/caller.js';
import { htmlPage, slackLinkForm, slackLinkQuery } from './slack.schemas.js';


function expiredPage(ctx: Context): void {
  sendHtmlPage(ctx, 404, 'Link not found', 'This Slack link is unknown, expired or already used. Write to the switchboard app in Slack again for a new one.', [['/', 'Home']]);
}

export function slackLinkRoutes(router: ApiRouter): ApiRouter {
  return router
    .route({
      method: 'get',
      path: SLACK_LINK_PATH,
      tags: ['channels'],
      summary: 'Page: confirm that a Slack user is me',
      description: 'The page the Slack bot sends an unlinked Slack user. Signed out: redirects to sign-in and back. Signed in: names the Slack user and workspace asking, with a button that confirms (POST). An unknown, used or expired token: a 404 page.',
      auth: 'public',
      request: { query: slackLinkQuery },
      responses: { 200: { description: 'HTML page with the confirmation form', schema: htmlPage, contentType: 'text/html' }, 302: { description: 'to sign-in, then back' } },
      handler: async ({ query }, ctx) => {
        if (!(await pageAllowed(ctx))) return;
        const request = await findLinkRequest(query.token);
        if (!request) return expiredPage(ctx);
        const person = personOf(ctx)!;
        sendHtmlPage(
          ctx,
          200,
          'Link your Slack account',
          `Slack user ${request.slack_user_id} of workspace ${request.team_id} asks to act as you (${person.name}) with the switchboard assistant. Confirm only if you just wrote to the app in Slack yourself.`,
          [['/', 'Cancel']],
          { action: SLACK_LINK_PATH, fields: { token: query.token, csrf_token: person.csrf_token }, button: 'Yes, this Slack account is mine' },
        );
      },
    })
    .route({
      method: 'post',
      path: SLACK_LINK_PATH,
      tags: ['channels'],
      summary: 'Confirm that a Slack user is me',
      description: 'The form of GET /slack/link: links the Slack user of the token to the signed-in person (a link of that Slack user to someone else is replaced) and uses the token up. Needs the browser session and its CSRF token (field csrf_token); a cross-site post is refused.',
      auth: 'public',
      request: { body: slackLinkForm, bodyType: 'application/x-www-form-urlencoded' },
      responses: { 200: { description: 'HTML page: linked', schema: htmlPage, contentType: 'text/html' } },
      errors: { 403: 'Not signed in from this site, or the CSRF token does not match', 404: 'The token is unknown, used or expired (HTML page)' },
      handler: async ({ body }, ctx) => {
        if (!(await pageAllowed(ctx))) return;
        checkCsrf(ctx, personOf(ctx)!.csrf_token, body.csrf_token);
        const { userId } = await portalCaller(ctx);
        const linked = await confirmLink(body.token, userId);
        if (!linked) return expiredPage(ctx);
        sendHtmlPage(ctx, 200, 'Slack account linked', `Slack user ${linked.slack_user_id} of workspace ${linked.team_id} is now you for the switchboard assistant. Write to the app in Slack again.`, [['/', 'Home']]);
      },
    });
}
