/**
 * A local server speaking Twilio's REST API as its documentation shows it: Messages
 * (POST /2010-04-01/Accounts/{AccountSid}/Messages.json, form-encoded, basic auth with the account
 * SID and auth token, 201 with the message resource; GET lists them newest first, filtered by To and
 * From) and Content (POST /v1/Content, JSON). `failNext` makes the next Messages calls answer with a
 * Twilio error document; `delayNext` makes the next ones accept the message but answer late.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface ReceivedMessage {
  accountSid: string;
  auth: { user: string; password: string };
  params: Record<string, string>;
  sid: string;
  createdAt: Date;
}

const sid = (prefix: string) => prefix + randomBytes(16).toString('hex');

export async function startLocalTwilio() {
  const messages: ReceivedMessage[] = [];
  const contents: Array<{ auth: { user: string; password: string }; body: Record<string, unknown>; sid: string }> = [];
  const failures: Array<{ status: number; code: number; message: string }> = [];
  const delays: number[] = [];
  let lateAnswers = 0;
  /** Query strings of the Messages list requests. */
  const lookups: URLSearchParams[] = [];
  const resource = (m: ReceivedMessage) => ({
    sid: m.sid,
    account_sid: m.accountSid,
    from: m.params.From,
    to: m.params.To,
    body: m.params.Body ?? '',
    status: 'queued',
    num_segments: '1',
    direction: 'outbound-api',
    api_version: '2010-04-01',
    date_created: m.createdAt.toUTCString(),
    date_sent: null,
    uri: `/2010-04-01/Accounts/${m.accountSid}/Messages/${m.sid}.json`,
  });
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const [user = '', password = ''] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
      const auth = { user, password };
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const [path = '', search = ''] = (req.url ?? '').split('?');
      const m = /^\/2010-04-01\/Accounts\/(AC\w+)\/Messages\.json$/.exec(path);
      if (req.method === 'GET' && m) {
        const query = new URLSearchParams(search);
        lookups.push(query);
        const pageSize = Number(query.get('PageSize') ?? 50);
        const found = messages
          .filter((x) => x.accountSid === m[1] && (!query.get('To') || x.params.To === query.get('To')) && (!query.get('From') || x.params.From === query.get('From')))
          .reverse()
          .slice(0, pageSize);
        const uri = `/2010-04-01/Accounts/${m[1]}/Messages.json?${search}`;
        return json(200, { messages: found.map(resource), page: 0, page_size: pageSize, start: 0, end: Math.max(found.length - 1, 0), uri, first_page_uri: uri, next_page_uri: null, previous_page_uri: null });
      }
      if (req.method === 'POST' && m) {
        if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return json(415, { message: 'form expected' });
        const failure = failures.shift();
        if (failure) return json(failure.status, { code: failure.code, message: failure.message, more_info: `https://www.twilio.com/docs/errors/${failure.code}`, status: failure.status });
        const params = Object.fromEntries(new URLSearchParams(raw));
        const message = { accountSid: m[1]!, auth, params, sid: sid('SM'), createdAt: new Date() };
        messages.push(message);
        const delay = delays.shift();
        if (delay) return void setTimeout(() => (json(201, resource(message)), lateAnswers++), delay);
        return json(201, resource(message));
      }
      if (req.method === 'POST' && req.url === '/v1/Content') {
        const body = JSON.parse(raw) as Record<string, unknown>;
        const content = { auth, body, sid: sid('HX') };
        contents.push(content);
        return json(201, { sid: content.sid, friendly_name: body.friendly_name, language: body.language, types: body.types, variables: {}, url: `https://content.twilio.com/v1/Content/${content.sid}` });
      }
      json(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages,
    contents,
    /** The next Messages calls fail with these Twilio errors, in order. */
    failNext: (...errors: Array<{ status: number; code: number; message: string }>) => failures.push(...errors),
    /** The next Messages calls create the message but answer only after these many milliseconds, in order. */
    delayNext: (...ms: number[]) => delays.push(...ms),
    /** How many of those late answers have been written so far. */
    lateAnswers: () => lateAnswers,
    lookups,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
