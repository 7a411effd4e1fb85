/**
 * Slack's Web API through the official `@slack/web-api` client: chat.postMessage (replies in the
 * thread of a direct message), chat.postEphemeral (replies only the person sees, in a shared
 * channel) and conversations.replies (to
 * find a reply whose answer was lost); and an interaction's `response_url` (not a Web API method: a
 * JSON POST) to replace the message whose button was pressed. SLACK_API_URL points it at another base
 * URL (tests run a local server that speaks the same API). Retries are the queue's, not the client's.
 */
import type { KnownBlock, WebClient as WebClientType } from '@slack/web-api';
import { config } from '../config.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

const slack = loadOnFirstUse<typeof import('@slack/web-api')>('@slack/web-api');

let client: WebClientType | undefined;

function web(): WebClientType {
  if (!client) {
    const { botToken, apiUrl } = config().channels.slack;
    const lib = slack();
    client = new lib.WebClient(botToken, {
      ...(apiUrl ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } : {}),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: config().channels.slack.timeoutMs,
      logLevel: lib.LogLevel.ERROR,
    });
  }
  return client;
}

/** Posts a message only `user` sees in the channel (in a thread when `threadTs` is given; `blocks` with `text` as the fallback); returns its ts. */
export async function postSlackEphemeral(channel: string, user: string, text: string, threadTs?: string, blocks?: KnownBlock[]): Promise<{ ts: string; channel: string }> {
  const answer = await web().chat.postEphemeral({ channel, user, text, ...(threadTs ? { thread_ts: threadTs } : {}), ...(blocks ? { blocks } : {}) });
  return { ts: answer.message_ts!, channel };
}

/** Posts a message (in a thread when `threadTs` is given; `blocks` with `text` as the fallback); returns its ts. */
export async function postSlackMessage(channel: string, text: string, threadTs?: string, blocks?: KnownBlock[]): Promise<{ ts: string; channel: string }> {
  const answer = await web().chat.postMessage({ channel, text, ...(threadTs ? { thread_ts: threadTs } : {}), ...(blocks ? { blocks } : {}) });
  return { ts: answer.ts!, channel: answer.channel ?? channel };
}

/**
 * Whether a response_url may be called: Slack's own hooks host (https), or SLACK_API_URL's origin
 * where tests point it. The payload carrying it is signed, but a POST from inside our network goes
 * only where Slack would send it.
 */
export function slackResponseUrlAllowed(responseUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(responseUrl);
  } catch {
    return false;
  }
  const { apiUrl } = config().channels.slack;
  if (apiUrl && url.origin === new URL(apiUrl).origin) return true;
  return url.protocol === 'https:' && (url.hostname === 'hooks.slack.com' || url.hostname === 'hooks.slack-gov.com');
}

/** Replaces the message an interaction came from (its `response_url`, valid 30 minutes) with `text` and `blocks`. */
export async function replaceSlackMessage(responseUrl: string, text: string, blocks: KnownBlock[]): Promise<void> {
  if (!slackResponseUrlAllowed(responseUrl)) throw new Error('the response_url is not a Slack address');
  const res = await fetch(responseUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ replace_original: true, text, blocks }),
    signal: AbortSignal.timeout(config().channels.slack.timeoutMs),
  });
  if (!res.ok) throw new Error(`Slack answered the response_url with ${res.status}: ${(await res.text()).slice(0, 200)}`);
}

/** Messages of a thread posted by a bot with this text since `sinceTs`, oldest first. */
export async function findBotReplies(channel: string, threadTs: string, text: string, sinceTs: number): Promise<string[]> {
  const answer = await web().conversations.replies({ channel, ts: threadTs, oldest: String(sinceTs), limit: 200 });
  return (answer.messages ?? []).filter((m) => m.bot_id && m.text === text && m.ts).map((m) => m.ts!);
}

/** True for failures worth retrying: rate limits, HTTP 5xx and network faults; false for platform errors (channel_not_found, not_in_channel…). */
export function isTransientSlackError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  const lib = slack.ifLoaded();
  if (!lib) return true;
  if (code === lib.ErrorCode.PlatformError) return false;
  if (code === lib.ErrorCode.HTTPError) return ((err as { statusCode?: number }).statusCode ?? 500) >= 500;
  return true;
}

/** Forgets the cached client (tests change the configuration between files). */
export function resetSlackClient(): void {
  client = undefined;
}
