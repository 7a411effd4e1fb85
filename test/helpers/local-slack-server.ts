/**
 * A local server speaking Slack's Web API as its documentation shows it: POST /api/{method} with the
 * bot token as `Authorization: Bearer`, form-encoded (or JSON) arguments, and `{ok: true, …}` or
 * `{ok: false, error}` answers (HTTP 200), 429 with Retry-After when rate limited. Methods:
 * users.info, chat.postMessage, chat.postEphemeral, conversations.replies. `failNext` makes the next chat.postMessage
 * calls answer with an error; `delayNext` makes the next ones post but answer late.
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
}

export interface EphemeralMessage extends PostedMessage {
  user: string;
}

export type SlackFailure = { http: number } | { error: string };

export async function startLocalSlack(botToken: string) {
  const users = new Map<string, SlackUser>();
  const posted: PostedMessage[] = [];
  /** chat.postEphemeral messages: seen only by `user`, never in the channel's history. */
  const ephemeral: EphemeralMessage[] = [];
  const calls: Array<{ method: string; args: Record<string, string> }> = [];
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
        const message: PostedMessage = { token, channel: args.channel, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}), ts: nextTs() };
        posted.push(message);
        const body = { ok: true, channel: message.channel, ts: message.ts, message: { type: 'message', bot_id: 'B0BOT', text: message.text, ts: message.ts, thread_ts: message.thread_ts } };
        const delay = delays.shift();
        if (delay) return void setTimeout(() => json(200, body), delay);
        return json(200, body);
      }
      if (method === 'chat.postEphemeral') {
        if (!args.channel || !args.user || !args.text) return json(200, { ok: false, error: 'no_text' });
        const message: EphemeralMessage = { token, channel: args.channel, user: args.user, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}), ts: nextTs() };
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
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    users,
    posted,
    ephemeral,
    calls,
    failNext: (...f: SlackFailure[]) => failures.push(...f),
    delayNext: (...ms: number[]) => delays.push(...ms),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
