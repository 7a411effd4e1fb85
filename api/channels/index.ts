/**
 * The channels behind the channel contract (sms, slack, email, voice): their provider webhooks, the
 * channel state, and the records of their messages. Behind the session system's feature flag; each
 * channel answers 503 naming its missing settings while it is not configured.
 */
import { ApiRouter } from '../routing.js';
import { sessionSystemRouter } from '../sessions/gate.js';
import { NotFoundError } from '../../shared/errors.js';
import { getMessage, listMessages } from '../../shared/channels/messages.store.js';
import { channelStatuses } from '../../shared/channels/status.js';
import { channelMessageList, channelMessageParams, channelMessageQuery, channelMessageSchema, channelStatusSchema, publicChannelMessage } from './channels.schemas.js';
import { smsRoutes } from './sms.routes.js';
import { slackRoutes } from './slack.routes.js';
import { voiceRoutes } from './voice.routes.js';
import { slackLinkRoutes } from './slack-link.routes.js';

function recordRoutes(router: ApiRouter): ApiRouter {
  return router
    .route({
      method: 'get',
      path: '/api/channels',
      tags: ['channels'],
      summary: 'Which channels are live, and the settings each still needs',
      auth: 'key-or-sre',
      responses: { 200: { description: 'Every channel', schema: channelStatusSchema } },
      handler: async () => ({ channels: channelStatuses() }),
    })
    .route({
      method: 'get',
      path: '/api/channels/messages/{message_id}',
      tags: ['channels'],
      summary: 'One sms, slack or email message with its delivery state',
      auth: 'key-or-sre',
      request: { params: channelMessageParams },
      responses: { 200: { description: 'The message', schema: channelMessageSchema } },
      handler: async ({ params }) => {
        const message = await getMessage(params.message_id);
        if (!message) throw new NotFoundError(`No channel message ${params.message_id}.`);
        return publicChannelMessage(message);
      },
    })
    .route({
      method: 'get',
      path: '/api/channels/messages',
      tags: ['channels'],
      summary: 'Messages of the contract channels, newest first',
      auth: 'key-or-sre',
      request: { query: channelMessageQuery },
      responses: { 200: { description: 'Messages', schema: channelMessageList } },
      handler: async ({ query }) => ({ messages: (await listMessages(query)).map(publicChannelMessage) }),
    });
}

export function channelRoutes(): ApiRouter {
  return voiceRoutes(slackLinkRoutes(slackRoutes(smsRoutes(recordRoutes(sessionSystemRouter())))));
}
