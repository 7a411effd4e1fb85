/**
 * A local server speaking Slack's Web API as its documentation shows it: POST /api/{method} with the
 * bot token as `Authorization: Bearer`, form-encoded (or JSON) arguments, and `{ok: true, …}` or
 * `{ok: false, error}` answers (HTTP 200), 429 with Retry-After when rate limited. Methods:
 * users.info, chat.postMessage, chat.postEphemeral (both with `blocks`, a JSON array), conversations.replies.
 * `failNext` makes the next chat.postMessage calls answer with an error; `delayNext` makes the next
 * ones post but answer late. `press` builds the block_actions payload Slack sends when a person
 * presses a button of a posted message, with a `response_url` served here: a JSON POST with
 * `replace_original: true` replaces that message (text and blocks), at most 5 times, as Slack allows.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackUser {
  id: string;
  email?: string;
  name?: string;
}

export interface PostedMessage {
  token: string;
  channel: string;
  text: string;
  thread_ts?: string;
  ts: string;
  /** Block Kit blocks, when the message has them. */
  blocks?: Array<Record<string, any>>;
}

/** A POST to a response_url: the message it was for, and the body sent. */
export interface ResponseUrlCall {
  message: PostedMessage;
  body: Record<string, any>;
}

export interface EphemeralMessage extends PostedMessage {
  user: string;
}

/** Slack's Web API clients send `blocks` as a JSON array (a string in a form body). */
const blocksOf = (args: Record<string, unknown>): { blocks?: Array<Record<string, any>> } =>
  args.blocks === undefined ? {} : { blocks: typeof args.blocks === 'string' ? JSON.parse(args.blocks) : (args.blocks as Array<Record<string, any>>) };

export type SlackFailure = { http: number } | { error: string };

export async function startLocalSlack(botToken: string) {
  const users = new Map<string, SlackUser>();
  const posted: PostedMessage[] = [];
  /** chat.postEphemeral messages: seen only by `user`, never in the channel's history. */
  const ephemeral: EphemeralMessage[] = [];
  const calls: Array<{ method: string; args: Record<string, string> }> = [];
  const responses: ResponseUrlCall[] = [];
  // response_url path → the message it answers for and how often it was used.
  const responseUrls = new Map<string, { message: PostedMessage; uses: number }>();
  let pressCount = 0;
  const failures: SlackFailure[] = [];
  const delays: number[] = [];
  // Slack's ts: the posting time in seconds, and a sequence that makes it unique in the channel.
  const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(posted.length + 1).padStart(6, '0')}`;

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
      const hook = responseUrls.get((req.url ?? '').split('?')[0]!);
      if (hook) {
        // Slack lets a response_url be used five times within 30 minutes.
        if (++hook.uses > 5) return res.writeHead(404, { 'content-type': 'text/plain' }).end('used_up');
        const body = JSON.parse(raw || '{}') as Record<string, any>;
        responses.push({ message: hook.message, body });
        if (body.replace_original === true || body.replace_original === 'true') {
          hook.message.text = String(body.text ?? '');
          if (body.blocks) hook.message.blocks = body.blocks;
          else delete hook.message.blocks;
        }
        return json(200, { ok: true });
      }
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
      const args: Record<string, string> = String(req.headers['content-type']).includes('json') ? JSON.parse(raw || '{}') : Object.fromEntries(new URLSearchParams(raw));
      calls.push({ method, args });
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '') || args.token;
      if (token !== botToken) return json(200, { ok: false, error: 'invalid_auth' });
      if (method === 'users.info') {
        const user = users.get(args.user ?? '');
        if (!user) return json(200, { ok: false, error: 'user_not_found' });
        return json(200, { ok: true, user: { id: user.id, team_id: 'T0TEAM', name: user.name ?? user.id, is_bot: false, profile: { email: user.email, real_name: user.name ?? user.id } } });
      }
      if (method === 'chat.postMessage') {
        const failure = failures.shift();
        if (failure && 'http' in failure) return json(failure.http, { ok: false, error: 'ratelimited' }, failure.http === 429 ? { 'retry-after': '0' } : {});
        if (failure) return json(200, { ok: false, error: failure.error });
        if (!args.channel || !args.text) return json(200, { ok: false, error: 'no_text' });
        const message: PostedMessage = { token, channel: args.channel, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}), ts: nextTs(), ...blocksOf(args) };
        posted.push(message);
        const body = { ok: true, channel: message.channel, ts: message.ts, message: { type: 'message', bot_id: 'B0BOT', text: message.text, ts: message.ts, thread_ts: message.thread_ts } };
        const delay = delays.shift();
        if (delay) return void setTimeout(() => json(200, body), delay);
        return json(200, body);
      }
      if (method === 'chat.postEphemeral') {
        if (!args.channel || !args.user || !args.text) return json(200, { ok: false, error: 'no_text' });
        const message: EphemeralMessage = { token, channel: args.channel, user: args.user, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}), ts: nextTs(), ...blocksOf(args) };
        ephemeral.push(message);
        return json(200, { ok: true, message_ts: message.ts });
      }
      if (method === 'conversations.replies') {
        const oldest = Number(args.oldest ?? 0);
        const inThread = posted.filter((m) => m.channel === args.channel && m.thread_ts === args.ts && Number(m.ts) >= oldest);
        return json(200, { ok: true, has_more: false, messages: inThread.map((m) => ({ type: 'message', bot_id: 'B0BOT', text: m.text, ts: m.ts, thread_ts: m.thread_ts })) });
      }
      json(200, { ok: false, error: 'unknown_method' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  /**
   * The block_actions payload Slack posts to the Interactivity Request URL when `user` (of `teamId`)
   * presses the button `actionId` of `message` (its container, the message itself unless ephemeral,
   * the action, a fresh response_url).
   */
  const press = (message: PostedMessage | EphemeralMessage, actionId: string, user: string, teamId = 'T0TEAM') => {
    const actions = (message.blocks ?? []).filter((b) => b.type === 'actions');
    const block = actions.find((b) => (b.elements as Array<{ action_id: string }>).some((e) => e.action_id === actionId));
    if (!block) throw new Error(`no button ${actionId} in ${JSON.stringify(message.blocks)}`);
    const element = (block.elements as Array<Record<string, any>>).find((e) => e.action_id === actionId)!;
    const path = `/actions/${teamId}/${++pressCount}/${Math.random().toString(36).slice(2)}`;
    responseUrls.set(path, { message, uses: 0 });
    const ephemeral = 'user' in message;
    return {
      type: 'block_actions',
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: teamId },
      api_app_id: 'A0APP',
      token: 'deprecated-verification-token',
      container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: ephemeral, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
      trigger_id: `${pressCount}.${Date.now()}.abcdef`,
      team: { id: teamId, domain: 'test-team' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: message.channel, name: message.channel.startsWith('D') ? 'directmessage' : 'general' },
      ...(ephemeral ? {} : { message: { type: 'message', bot_id: 'B0BOT', text: message.text, ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}), blocks: message.blocks } }),
      state: { values: {} },
      response_url: `http://127.0.0.1:${port}${path}`,
      actions: [{ ...element, block_id: block.block_id, action_ts: `${Math.floor(Date.now() / 1000)}.${String(pressCount).padStart(6, '0')}` }],
    };
  };

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    users,
    posted,
    ephemeral,
    calls,
    responses,
    press,
    failNext: (...f: SlackFailure[]) => failures.push(...f),
    delayNext: (...ms: number[]) => delays.push(...ms),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
