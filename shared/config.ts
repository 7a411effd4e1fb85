/**
 * The platform's configuration: every environment variable, parsed once by one zod schema.
 * Each variable carries a one-line description (also the source of `.env.example`) and its default.
 */
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const optionalUrl = z.url().optional();
const optionalText = z.string().min(1).optional();

/** An IP address, or a CIDR range (address/prefix length). */
const relayEntry = (entry: string) => {
  const [address = '', bits, ...more] = entry.split('/');
  const family = isIP(address);
  return family !== 0 && !more.length && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
};

/** An interval in Postgres syntax ("30 minutes", "24 hours", "7 days", "1 day 2 hours"). */
export const intervalPattern =
  /^\s*(\d+(\.\d+)?\s*(microseconds?|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|days?|weeks?|months?|years?)\s*)+$/i;
const interval = (fallback: string) =>
  z.string().regex(intervalPattern, 'must be an interval such as "30 minutes" or "24 hours"').default(fallback);

/** A retention period: an interval, or "forever" (never pruned). */
const retention = (fallback: string) =>
  z.union([z.literal('forever'), z.string().regex(intervalPattern, 'must be an interval such as "30 days", or forever')]).default(fallback);

/** A comma-separated list of ids, blanks dropped. */
const idList = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);
/** TRUST_PROXY read: undefined when off, a hop count, or the trusted proxies' addresses; null when malformed. */
export type TrustProxy = { hops: number } | { proxies: BlockList } | undefined;
export function trustProxyOf(value: string): TrustProxy | null {
  if (!value || /^(false|off|no|0)$/i.test(value)) return undefined;
  if (/^\d+$/.test(value)) return { hops: Number(value) };
  const proxies = new BlockList();
  for (const entry of value.split(',').map((e) => e.trim())) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return null;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) proxies.addAddress(address!, type);
    else if (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)) proxies.addSubnet(address!, Number(bits), type);
    else return null;
  }
  return { proxies };
}

/** Variable name → schema and one-line description. Order is the order of `.env.example`. */
export const variables = {
  NODE_ENV: [z.enum(['development', 'test', 'production']).default('development'), 'development, test or production; production also requires DATABASE_URL (test: the test suite only, which configures itself; the built platform refuses it)'],
  SWITCHBOARD_DEV: [bool(false), 'set by npm run dev only: development conveniences (API key dev-key, admin/admin, unsigned alert and lead webhooks); without it (or NODE_ENV=test) every start requires real credentials'],
  PORT: [int(3000, 0), 'HTTP port of the API (web role)'],
  HOST: [z.string().default('0.0.0.0'), 'address the API binds to'],
  LOG_LEVEL: [z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(), 'pino log level; default info, silent when NODE_ENV=test'],
  API_KEYS: [z.string().default(''), 'comma-separated full-access API keys for service routes (X-API-Key or Authorization: Bearer), each at least 16 characters; required outside npm run dev, which accepts dev-key when empty; scoped keys: POST /api/v1/keys'],
  ADMIN_USER: [z.string().default(''), 'basic-auth user of operator pages (/admin/queues); required outside npm run dev (default admin there)'],
  ADMIN_PASSWORD: [z.string().default(''), 'basic-auth password of operator pages; required outside npm run dev (default admin there)'],
  METRICS_TOKEN: [z.string().default(''), 'bearer token that /metrics (web and worker roles) requires; required in production (at least 16 characters); empty leaves /metrics open (development and tests only)'],
  PUBLIC_URL: [optionalUrl, 'address people open in the browser (scheme, host, port); the OIDC redirect is PUBLIC_URL/api/global/auth/oidc/callback; default http://localhost:PORT, https required in production'],
  TRUST_PROXY: [
    z.string().trim().default('').refine((v) => trustProxyOf(v) !== null, 'must be empty (off), a hop count such as 1, or comma-separated proxy addresses or CIDR ranges such as 10.0.0.2,10.1.0.0/16'),
    'when the client address comes from TRUST_PROXY_HEADER: empty (default) never, the socket\'s peer is the client; a hop count N: the Nth address from the right (N proxies in front, each appending); addresses or CIDR ranges: only when the peer is one of them, the right-most address not in the list',
  ],
  TRUST_PROXY_HEADER: [z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name').default('X-Forwarded-For'), 'header the trusted proxies put the client address in (read only when TRUST_PROXY is set)'],
  BODY_LIMIT: [z.string().regex(/^\d+(kb|mb)$/i, 'must look like 512kb or 1mb').default('1mb'), 'largest accepted request body; larger ones get 413'],
  MAX_JSON_DEPTH: [int(64, 2), 'deepest nesting of objects and arrays a request body may have; deeper bodies get 400 naming the field'],

  OIDC_ISSUER_URL: [optionalUrl, 'OpenID Connect provider (discovery at /.well-known/openid-configuration below it); unset in dev starts an embedded provider with dev accounts'],
  OIDC_CLIENT_ID: [optionalText, 'client id registered at the provider'],
  OIDC_CLIENT_SECRET: [optionalText, 'client secret registered at the provider'],
  OIDC_ROLES_CLAIM: [z.string().min(1).default('roles'), 'claim of the ID token or userinfo holding the person\'s roles or groups (e.g. roles, groups)'],
  OIDC_ROLE_MAP: [
    z.string().regex(/^\s*[^:,\s][^:,]*:(sre|staff|sales)\s*(,\s*[^:,\s][^:,]*:(sre|staff|sales)\s*)*$/, 'must look like ops-team:sre,support:staff,sales-team:sales').optional(),
    'provider group → platform role (sre, staff or sales), comma-separated; a claim value sre, staff or sales is that role without mapping',
  ],
  AUTH_SESSION_IDLE: [interval('8 hours'), 'a browser session ends after this long without a request, interval syntax'],
  AUTH_SESSION_MAX: [interval('7 days'), 'a browser session ends this long after sign-in whatever its use, interval syntax'],
  AUTH_ROLES_REFRESH: [interval('5 minutes'), 'a browser session\'s roles (and name, email) are re-read from the identity provider at its first request after this long (refresh token, else userinfo); a person the provider no longer vouches for is signed out; interval syntax'],
  DEV_OIDC_PORT: [int(9410, 1), 'port of the identity provider npm run dev embeds when OIDC_ISSUER_URL is unset'],

  DATABASE_URL: [optionalUrl, 'PostgreSQL connection string; unset in dev starts an embedded PostgreSQL under .data/'],
  DATABASE_POOL_MAX: [int(10, 1), 'connections per process in the knex pool'],
  DATABASE_POOL_MIN: [int(2, 0), 'connections per process the pool keeps open (at most DATABASE_POOL_MAX); the API opens them before /readyz answers 200'],
  DATABASE_STATEMENT_TIMEOUT_MS: [int(15000, 0), 'longest a database statement of the API and workers may run (Postgres statement_timeout; 0 = none); migrations are not bounded'],
  DATABASE_CONNECT_TIMEOUT_MS: [int(1000, 1), 'longest wait for a new PostgreSQL connection'],
  DATABASE_ACQUIRE_TIMEOUT_MS: [int(1500, 1), 'longest wait for a connection of the pool before the request is answered 503'],
  API_OUTAGE_DEADLINE_MS: [int(1700, 100), 'web role: while Redis or PostgreSQL is failing, a request not answered by then gets 503 with Retry-After (its work may still finish)'],
  API_QUERY_TIMEOUT_MS: [int(1500, 0), 'web role: longest wait for the answer to one query, so a frozen PostgreSQL gives 503 within 2 s (0 = none)'],
  DEV_POSTGRES_PORT: [int(54329, 1), 'port of the embedded PostgreSQL that npm run dev starts when DATABASE_URL is unset'],
  BUS_HOST: [z.string().default('localhost'), 'Redis host (message bus and queues)'],
  BUS_PORT: [int(6379, 1), 'Redis port'],
  BUS_PASSWORD: [z.string().default(''), 'Redis password, empty for none'],
  REDIS_COMMAND_TIMEOUT_MS: [int(1000, 1), 'longest a Redis command of a request or job step may go unanswered before it fails (503 for a request); blocking worker commands are exempt'],
  REDIS_ALLOW_VOLATILE: [bool(false), 'start in production although Redis has no persistence (appendonly/save) or evicts keys (maxmemory-policy other than noeviction): accepted work may be lost'],
  QUEUE_PREFIX: [z.string().min(1).default('switchboard'), 'key prefix of every BullMQ queue'],
  WORKER_METRICS_PORT: [int(9464, 0), 'port on which a worker process serves its /metrics (0 = random, -1 not allowed)'],

  SERVICE_SESSION_SYSTEM: [bool(false), 'feature flag enabling the session system (dev turns it on)'],
  SERVICE_SESSION_RESUME_WINDOW: [interval('24 hours'), 'default resume window of a session, interval syntax'],
  SERVICE_SESSION_MAX_HISTORY: [int(50, 1), 'messages kept in a session conversation_history'],
  SSE_MAX_STREAMS: [int(10000, 1), 'most SSE streams one API process holds open; more get 429 with Retry-After'],
  SSE_MAX_STREAMS_PER_KEY: [int(2000, 1), 'most SSE streams one API key holds open in one API process; more get 429 with Retry-After'],
  SESSION_SSE_KEEPALIVE_SECONDS: [int(15, 1), 'seconds between SSE keep-alive comments'],
  SESSION_PUBLISH_WAIT_MS: [int(2000, 0), 'how long POST messages waits for persist+publish before answering 202'],
  SESSION_EXPIRY_CRON: [z.string().default('* * * * *'), 'cron expression of the tick that closes expired sessions'],
  WEBCHAT_IDLE_SECONDS: [int(1800, 60), 'seconds without a message after which a web-chat interaction ends (checked by the expiry tick)'],

  STREAM_LANES: [int(1, 1), 'lanes of the session stream (hash of the session id mod this): each runs one job at a time across all worker processes, lanes run in parallel. One suits one machine; on a fleet about one per worker process (docs/performance.md). Every process of a deployment must agree; change it only with the lanes drained (README)'],
  STREAM_SESSION_CACHE_MS: [int(60000, 0), 'longest an API process trusts its cached answer that a session is live (closes and erasures reach every process over the bus at once; this bounds a missed one); 0 = ask Postgres for every publish'],
  STREAM_LOCK_TIMEOUT_MS: [int(500, 1), 'longest a lane waits for a session row held by someone else before it parks that session (its events then wait, in order, on their own) and moves on'],

  // The messaging app (WhatsApp through Twilio); its account is the one Twilio account below (TWILIO_*).
  CHATAPP_FROM_NUMBER: [z.string().default(''), 'messaging-app sender number, e.g. whatsapp:+14155238886'],
  CHATAPP_PUBLIC_URL: [optionalUrl, 'public URL of POST /chatapp/webhook as the provider calls it (else rebuilt from the request, with X-Forwarded-* only behind a TRUST_PROXY proxy)'],
  CHATAPP_TIMEOUT_MS: [int(15000, 100), 'longest wait for one provider call of the Twilio channels (messaging app, sms, voice) and Slack; a send whose answer did not come in time is looked up at the provider before it is sent again'],
  CHATAPP_TEMPLATE_SIDS: [z.string().regex(/^(\s*\w+=HX\w+\s*)(,\s*\w+=HX\w+\s*)*$/, 'must look like task_reminder=HX123,weekly_review=HX456').optional(), 'approved template Content SIDs by template name (name=HX…, comma-separated); a template without one is sent as its rendered text'],

  // Channels behind the channel contract (shared/channels): each is live when its settings are set.
  CHANNELS_PUBLIC_URL: [optionalUrl, 'public base URL the channel providers call (https://hooks.example.com): Twilio signs /sms/webhook and /voice/incoming there and the call relay is its wss:// /voice/relay; else rebuilt from the request (X-Forwarded-Proto / X-Forwarded-Host only from a TRUST_PROXY proxy)'],
  CHANNELS_IDLE_SECONDS: [int(1800, 60), 'seconds without a message after which an sms, slack or email interaction ends (checked by the expiry tick); the next message opens a new one'],
  TWILIO_ACCOUNT_SID: [z.string().default(''), 'Twilio account SID of the sms, voice and messaging-app channels'],
  TWILIO_AUTH_TOKEN: [z.string().default(''), 'Twilio auth token of the sms, voice and messaging-app channels; keys their X-Twilio-Signature check and the call relay tokens'],
  TWILIO_API_BASE_URL: [optionalUrl, 'Twilio REST API base URL (default: Twilio\'s own); tests point it at a local server'],
  SMS_FROM_NUMBER: [z.string().regex(/^(\+[1-9]\d{1,14}|MG\w{32})$/, 'must be an E.164 number or a Messaging Service SID (MG…)').optional(), 'sms channel: number (E.164) or Messaging Service SID proactive messages go out from; replies go out from the number written to'],
  VOICE_WELCOME_GREETING: [z.string().min(1).default('Hello, this is switchboard. How can I help?'), 'voice channel: what a known caller hears first (ConversationRelay welcomeGreeting)'],
  VOICE_UNKNOWN_CALLER_MESSAGE: [z.string().min(1).default("Sorry, we couldn't find an account linked to this number. Goodbye."), 'voice channel: what a caller whose number belongs to no user hears before the call ends'],
  VOICE_RELAY_TOKEN_SECONDS: [int(120, 5), 'voice channel: how long the single-use token /voice/incoming puts in the relay URL may open the relay socket (it is bound to the CallSid, From and To)'],
  VOICE_MAX_SOCKETS_PER_CALL: [int(1, 1), 'voice channel: relay sockets one CallSid may open, whatever tokens it holds; more are refused (409)'],
  VOICE_MAX_TURNS_PER_CALL: [int(100, 1), 'voice channel: caller utterances and keypad entries one call may make; past it the caller hears goodbye and the call ends'],
  VOICE_IDLE_SECONDS: [int(120, 1), 'voice channel: seconds without a relay message either way after which the call socket is closed (a setup that never comes, a stalled relay)'],
  VOICE_TRUST_ATTESTATION_A: [bool(false), "voice channel: a call Twilio reports as StirVerstat TN-Validation-Passed-A (carrier's full attestation of the number) gets the person's full rights without the PIN; off: only the PIN does"],
  SLACK_SIGNING_SECRET: [z.string().default(''), 'slack channel: the app\'s signing secret; keys the X-Slack-Signature check of POST /slack/events'],
  SLACK_BOT_TOKEN: [z.string().default(''), 'slack channel: bot token (xoxb-…) the replies use'],
  SLACK_TEAM_IDS: [z.string().default(''), "slack channel: comma-separated workspace (team) ids whose events are accepted (T…); required: another workspace's events are refused (403)"],
  SLACK_ENTERPRISE_IDS: [z.string().default(''), 'slack channel: comma-separated Enterprise Grid ids (E…); when set, an event must also come from one of them'],
  SLACK_LINK_MINUTES: [int(15, 1), 'slack channel: how long the link an unlinked Slack user gets from the bot may be confirmed (signed in, PUBLIC_URL/slack/link)'],
  SLACK_API_URL: [optionalUrl, 'slack channel: Web API base URL (default https://slack.com/api/); tests point it at a local server'],
  EMAIL_ADDRESS: [z.email().optional(), 'email channel: the address people write to; replies go out from it'],
  EMAIL_SMTP_URL: [optionalUrl, 'email channel: outgoing SMTP server, smtp://user:password@host:587 or smtps://…:465'],
  EMAIL_LISTEN_PORT: [int(2525, 0), 'email channel: port of the inbound SMTP listener (email role; put it behind the MX that checks SPF/DKIM)'],
  EMAIL_LISTEN_HOST: [z.string().default('127.0.0.1'), 'email channel: address the inbound SMTP listener binds to'],
  EMAIL_TRUSTED_AUTHSERV_ID: [z.string().min(1).optional(), 'email channel: authserv-id of the MX in front of the listener (e.g. mx.example.com); a message counts only when the top-most Authentication-Results of exactly this id shows dmarc=pass, or dkim=pass for a domain aligned with From:; others are recorded and refused (550). Required in production'],
  EMAIL_RELAYS: [z.string().refine((v) => v.split(',').every((e) => relayEntry(e.trim())), 'must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.5,10.1.0.0/16)').optional(), 'email channel: IP addresses or CIDR ranges (comma-separated) of the MX and relays that may deliver to the SMTP listener; any other host is refused at connect (554). Unset: any host (development only; required in production)'],
  EMAIL_MAX_BYTES: [int(10 * 1024 * 1024, 1024), 'email channel: largest inbound message the SMTP listener accepts (SIZE); past it the rest of the DATA is read and dropped (memory stays flat) and the message is refused with 552'],
  EMAIL_MAX_CLIENTS: [int(20, 1), 'email channel: SMTP connections the listener serves at once; one more is told 421 (try again later)'],

  LLM_PROVIDER: [z.enum(['none', 'openai']).default('none'), 'language model provider: none (fixed answer) or openai (any OpenAI-compatible endpoint)'],
  LLM_API_KEY: [z.string().default(''), 'API key of the language model provider'],
  LLM_BASE_URL: [optionalUrl, 'base URL of the OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio)'],
  LLM_MODEL: [z.string().default('gpt-4o-mini'), 'model name'],

  CRM_WEBHOOK_SECRET: [z.string().default(''), 'secret of the lead webhooks (HMAC-SHA256 or Standard Webhooks); required outside npm run dev, where empty accepts unsigned requests'],
  CRM_WEBHOOK_REPLAY_WINDOW: [int(86400, 1), 'seconds during which a body signed with X-Webhook-Signature is not accepted again (replay protection of the untimestamped scheme)'],
  CRM_BATCH_MAX: [int(1000, 1), 'most leads accepted by one batch webhook call; more gets 413'],
  CRM_BATCH_WAIT_MS: [int(15000, 0), 'how long the batch webhook waits for the queued batch to be written before answering 202 (accepted, still processing)'],

  ALERT_WEBHOOK_TOKEN: [z.string().default(''), 'secret of the default alert sources (bearer token or basic-auth password); required outside npm run dev, where empty accepts unauthenticated alerts'],
  FLAP_THRESHOLD: [int(5, 1), 'state changes within FLAP_WINDOW above which an alert is flapping'],
  FLAP_WINDOW: [int(600, 1), 'flapping window in seconds'],
  ALERT_RETRY_WINDOW: [int(60, 1), 'seconds after a first attempt within which the same webhook body from the same alert source counts once: a sender\'s retry, not a new notification'],
  ESCALATION_AFTER: [int(900, 1), 'seconds an incident may stay unacknowledged before it is escalated'],
  ESCALATION_WEBHOOK_URL: [optionalUrl, 'notification webhook that receives escalations'],
  ISSUE_TRACKER_URL: [optionalUrl, 'issue tracker (GitLab) base URL'],
  ISSUE_TRACKER_TOKEN: [z.string().default(''), 'issue tracker access token (PRIVATE-TOKEN)'],
  ISSUE_TRACKER_PROJECT_ID: [z.string().default(''), 'numeric issue tracker project id'],
  AUTOMATION_URL: [optionalUrl, 'workflow automation (n8n) base URL'],
  AUTOMATION_API_KEY: [z.string().default(''), 'workflow automation API key (x-automation-api-key / X-N8N-API-KEY)'],

  DOCUMENT_MAX_BYTES: [int(20 * 1024 * 1024, 1), 'largest portal document upload in bytes (larger → 413, nothing stored)'],
  DOCUMENT_EXTRACT_TIMEOUT_MS: [int(30000, 100), 'wall-time limit of extracting one document\'s text (its own process, at the lowest CPU priority, start included); over it the process is killed and the document failed with the reason'],
  DOCUMENT_EXTRACT_MAX_MEMORY_MB: [int(256, 16), 'heap limit in MB (--max-old-space-size) of the process extracting one document\'s text; over it the document is failed with the reason'],
  DOCUMENT_EXTRACT_MAX_ADDRESS_SPACE_MB: [int(1536, 0), 'whole address space in MB (RLIMIT_AS, as ulimit -v) of the process extracting one document: buffers outside the heap count too; Node 24 reserves ~1.25 GB of it before reading anything (so below ~1300 nothing extracts), the default leaves ~300 MB for the parse; 0 = no limit'],
  AGENT_API_URL: [optionalUrl, 'agent API the portal reads conversation history from (GET /sessions…); default this platform (PUBLIC_URL)'],
  AGENT_API_KEY: [z.string().default(''), 'X-API-Key the portal sends to AGENT_API_URL; default the first of API_KEYS'],
  TOOL_CALL_TIMEOUT_MS: [int(30000, 100), 'time limit of one tool-gateway call (gateway routes, /mcp, agent); over it the call is a tool error'],
  TOOL_RESULT_MAX_BYTES: [int(262144, 256), 'largest tool result (JSON bytes) the gateway hands back; over it the call is a tool error'],
  WORKFLOW_TOOL_TAG: [z.string().min(1).default('switchboard-tool'), 'tag that offers an active automation workflow as a tool (workflow executor)'],
  WORKFLOW_TOOLS_TTL: [int(60, 1), 'seconds the list of workflow tools is cached before GET /api/v1/workflows is asked again'],
  AGENT_DELEGATION_WAIT_MS: [int(20000, 0), 'how long agent_delegate waits for the answer before returning the run id (capped below TOOL_CALL_TIMEOUT_MS)'],
  AGENT_SERVICE_USER_PHONE: [z.string().regex(/^\+[1-9][0-9]{1,14}$/, 'must be an E.164 number').default('+19990000000'), 'phone number of the service user created on demand for agent delegations without a user'],
  CONFIRMATION_TTL_SECONDS: [int(900, 1), 'how long a change the assistant asked about waits for the person\'s yes (default 15 minutes); a later yes is answered as expired and nothing runs'],
  ISSUE_TRACKER_BASE_URL: [optionalUrl, 'issue-tracker tool server: public address of the issue tracker, used in the links its tools return (default ISSUE_TRACKER_API_URL)'],
  ISSUE_TRACKER_API_URL: [optionalUrl, 'issue-tracker tool server: internal address of the issue tracker (GitLab) it calls'],
  ISSUE_TRACKER_PROJECT_PATH: [z.string().regex(/^[\w.-]+(\/[\w.-]+)+$/, 'must look like group/project').optional(), 'issue-tracker tool server: path of the project it works on, e.g. group/project'],
  ISSUE_TRACKER_VERIFY_SSL: [bool(true), 'issue-tracker tool server: verify the TLS certificate of ISSUE_TRACKER_API_URL (false for a self-signed internal tracker)'],
  ISSUE_TRACKER_MCP_TOKEN: [z.string().default(''), 'issue-tracker tool server: access token it sends as PRIVATE-TOKEN'],
  IDENTITY_BASE_URL: [optionalUrl, 'issue-tracker tool server: identity provider whose tokens it accepts (JWKS from /.well-known/openid-configuration, issuer and audience checked); unset: MCP_SERVICE_TOKENS'],
  MCP_SERVICE_PORT: [int(9400, 0), 'port of the issue-tracker tool server (tools role, MCP over Streamable HTTP at /mcp)'],
  MCP_SERVICE_URL: [optionalUrl, 'public address of the issue-tracker tool server (default http://localhost:MCP_SERVICE_PORT); the audience identity-provider tokens must carry'],
  MCP_SERVICE_TOKENS: [z.string().default(''), 'comma-separated bearer tokens the issue-tracker tool server accepts when IDENTITY_BASE_URL is unset (npm run dev generates one)'],

  CONTAINER_RUNTIME_HOST: [z.string().default(''), 'container runtime: tcp://host:port of a Docker socket proxy or a unix socket path'],
  METRICS_URL: [optionalUrl, 'Prometheus base URL (targets discovery, rule reload)'],
  PROXY_API_URL: [optionalUrl, 'Traefik API base URL'],
  DISCOVERY_ALLOWED_TARGETS: [z.string().default(''), 'comma-separated hosts, host:port pairs and unix socket paths that discovery sources set through the API may use although private or local (configured sources always may)'],
  DISCOVERY_ENABLED: [bool(true), 'run scheduled discovery'],
  DISCOVERY_INTERVAL: [int(300, 1), 'seconds between scheduled discovery runs'],
  MONITORS_AUTO_APPLY: [bool(true), 'turn recommendations for new entities into entity monitors'],
  MONITORS_MODEL_AUTO: [bool(true), 'ask the language model (when configured) for rules for new entities, one call per entity type and template signature'],
  RULES_DIR: [z.string().default('.data/rules'), 'directory of the Prometheus rule file written by deploy-all (by the workers of the rules queue, which must share it with Prometheus)'],

  // Running on many hosts (docs/operations.md). Every variable may also be given as <NAME>_FILE: the path of a file holding its value (container secrets).
  REDIS_URL: [z.string().regex(/^rediss?:\/\/[^\s]*$/, 'must be a redis:// or rediss:// URL').optional(), 'Redis as a URL, replacing BUS_HOST, BUS_PORT and BUS_PASSWORD when set: redis:// or rediss:// (TLS), optional ACL user and password, database index as the path (rediss://app:secret@redis.internal:6380/2)'],
  REDIS_SENTINELS: [z.string().regex(/^\s*[^\s:,]+:\d{1,5}\s*(,\s*[^\s:,]+:\d{1,5}\s*)*$/, 'must look like sentinel-1:26379,sentinel-2:26379').optional(), 'Redis Sentinel: comma-separated host:port of the sentinels; set, every connection (queues, stream, bus) asks them for the current master of REDIS_SENTINEL_MASTER and follows a failover (BUS_HOST/BUS_PORT and REDIS_URL\'s host are then unused; its user, password and database still apply)'],
  REDIS_SENTINEL_MASTER: [z.string().min(1).default('mymaster'), 'Redis Sentinel: name of the monitored master (sentinel monitor <name> …)'],
  REDIS_SENTINEL_USERNAME: [optionalText, 'Redis Sentinel: ACL user of the sentinels themselves, if they require one'],
  REDIS_SENTINEL_PASSWORD: [z.string().default(''), 'Redis Sentinel: password of the sentinels themselves (requirepass of sentinel.conf), empty for none; the master\'s password is BUS_PASSWORD or REDIS_URL\'s'],
  WORKER_METRICS_HOST: [z.string().min(1).default('127.0.0.1'), 'address on which a worker process serves /metrics and /healthz (the container image sets 0.0.0.0)'],
  SHUTDOWN_DRAIN_DELAY_MS: [int(5000, 0), 'after SIGTERM, how long the web and tools roles keep serving with /readyz failing before they stop accepting (lets the load balancer stop routing to them; none after SIGINT)'],
  SHUTDOWN_TIMEOUT_MS: [int(25000, 1000), 'after SIGTERM or SIGINT, longest a process takes to drain and close before it exits anyway (below the orchestrator\'s grace period, 30 s in Kubernetes)'],
  EMAIL_HEALTH_PORT: [int(9465, 0), 'email role: port on EMAIL_LISTEN_HOST serving /healthz (liveness) and /readyz (Redis reachable, not stopping)'],
  MONITORS_PLATFORM_RULES: [bool(true), 'deploy-all also installs the platform\'s own alert rules (deploy/monitoring/switchboard-alerts.yml) as switchboard-platform.yml in RULES_DIR'],
  MONITORS_DEPLOY_WAIT_MS: [int(60000, 1000), 'how long deploy-all waits for a worker of the rules queue to write RULES_DIR and reload Prometheus before answering 503'],
  // Tracing (shared/telemetry.ts): the standard OpenTelemetry settings; the SDK reads the other OTEL_* itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: [optionalUrl, 'OTLP collector base URL (http://collector:4318 for OTLP/HTTP); set, each role exports one trace per request through its jobs (off when unset)'],
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: [optionalUrl, 'OTLP URL of traces alone (e.g. http://collector:4318/v1/traces); turns tracing on like OTEL_EXPORTER_OTLP_ENDPOINT'],
  OTEL_SERVICE_NAME: [optionalText, 'service name on the traces; default switchboard-<role> (web, worker, tools, email)'],
  OTEL_SDK_DISABLED: [bool(false), 'true keeps tracing off even with an OTLP endpoint set'],
  RETENTION_PRUNE_CRON: [z.string().default('17 3 * * *'), 'cron expression of the tick that deletes rows past their retention (once per day by default; safe with many worker processes)'],
  RETENTION_ALERT_PAYLOADS: [retention('30 days'), 'how long raw alert webhook payloads are kept (sre_alert_payloads), interval syntax or forever'],
  RETENTION_ALERT_HISTORY: [retention('180 days'), 'how long alert state changes are kept (sre_alert_state_history)'],
  RETENTION_TOOL_CALLS: [retention('90 days'), 'how long the tool-call audit is kept (tool_calls)'],
  RETENTION_SESSION_EVENTS: [retention('90 days'), 'how long session stream events are kept for replay (session_events; messages and history are not pruned)'],
  RETENTION_DISCOVERY_RUNS: [retention('30 days'), 'how long finished discovery runs and their per-source results are kept'],
  RETENTION_RUNBOOK_EXECUTIONS: [retention('180 days'), 'how long finished runbook executions and their history are kept'],
  RETENTION_WEBHOOK_DELIVERIES: [retention('30 days'), 'how long lead-webhook delivery outcomes are kept (a delivery id repeated later is processed again)'],
  RETENTION_AGENT_STEPS: [retention('30 days'), 'how long recorded agent turn steps (replayed when a turn is retried) are kept'],
  WORKER_QUEUES: [z.string().regex(/^[\w-]+(\s*,\s*[\w-]+)*$/, 'must be comma-separated queue names').optional(), 'queues this worker process runs, comma-separated (sessions also takes its lanes); unset = every queue. Give the rules queue to the pool that can write RULES_DIR'],

  // Least authority: scoped keys and per-person limits.
  API_KEY_CACHE_MS: [int(5000, 0), 'how long an API process trusts what it read of a named key (POST /api/v1/keys); a revoked key stops working within this time, no restart needed'],
  LIMIT_UPLOADS_PER_HOUR: [int(30, 0), 'document uploads one person may start per hour (0 = no limit); more get 429 with Retry-After'],
  LIMIT_UPLOAD_BYTES_PER_HOUR: [int(200 * 1024 * 1024, 0), 'bytes of documents one person may upload per hour (0 = no limit)'],
  LIMIT_UPLOADS_CONCURRENT: [int(2, 0), 'uploads one person may have in progress at once, across API processes (0 = no limit)'],
  LIMIT_STREAMS_PER_PERSON: [int(20, 0), 'session streams on one person\'s sessions open at once, across API processes: their portal chat streams and those an API key opens on their sessions (GET /api/sessions/{id}/events) (0 = no limit)'],
  LIMIT_SIGNIN_STARTS_PER_MINUTE: [int(20, 0), 'sign-in starts (GET /api/global/auth/login) per client address per minute (0 = no limit)'],
  LIMIT_PHONE_CODES_PER_HOUR: [int(5, 0), 'phone verification codes one person asks for per hour (POST /api/portal/profile/phone) (0 = no limit)'],
  LIMIT_VOICE_PIN_ATTEMPTS: [int(5, 0), 'voice PINs one person may say or key per hour, right or wrong (a caller proving it is them on the phone) (0 = no limit)'],
  LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR: [int(3, 0), 'phone verification codes sent to one number per hour, whoever asks (0 = no limit): one person\'s cap alone lets many accounts flood one phone'],
  LIMIT_PHONE_CODES_TOTAL_PER_HOUR: [int(300, 0), 'phone verification codes sent per hour over all people and numbers (0 = no limit): bounds what the SMS and messaging-app bill can reach'],
  LIMIT_AGENT_TURNS_PER_MINUTE: [int(10, 0), 'agent turns (model calls with tools) one person starts per minute over all channels (0 = no limit); over it POST /api/chat and /api/portal/chat answer 429 with Retry-After and the text channels reply with a notice instead of the model'],
  LIMIT_PHONE_CODE_ATTEMPTS: [int(5, 0), 'phone verification codes one person may enter per PHONE_CODE_TTL_MINUTES, right or wrong (POST /api/portal/profile/phone/verify) (0 = no limit)'],
  PHONE_CODE_TTL_MINUTES: [int(10, 1), 'how long a phone verification code can be entered; it works once'],
  LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE: [int(1200, 0), 'messages and events published into one session per minute (0 = no limit)'],
  LIMIT_EMAIL_CONNECTIONS_PER_MINUTE: [int(120, 0), 'SMTP connections one address may open to the email listener per minute; more are told 421 (0 = no limit)'],
  LIMIT_EMAIL_MESSAGES_PER_SENDER_PER_HOUR: [int(30, 0), 'email messages one From: address may deliver per hour; more are told 451 (the relay retries later), which also breaks mail loops (0 = no limit)'],
  LIMIT_PUBLISHES_PER_KEY_PER_MINUTE: [int(600000, 0), 'messages and events one API key (or person) publishes per minute over all sessions (0 = no limit)'],
  // --- npm run dev: the local Prometheus and Alertmanager it starts when their Debian packages are installed
  DEV_MONITORING: [bool(true), 'npm run dev: start a local Prometheus and Alertmanager (Debian prometheus, prometheus-alertmanager) wired to the platform when METRICS_URL is unset'],
  DEV_PROMETHEUS_PORT: [int(9090, 1), 'npm run dev: port of the local Prometheus'],
  DEV_ALERTMANAGER_PORT: [int(9093, 1), 'npm run dev: port of the local Alertmanager'],
} as const satisfies Record<string, readonly [z.ZodType, string]>;

/**
 * Variables no longer read, each with the one that replaced it. A start that still sets one is refused
 * naming both, rather than running with what it configured silently ignored (CHANGELOG says how to move).
 */
export const retiredVariables = {
  CHATAPP_ACCOUNT_SID: 'TWILIO_ACCOUNT_SID',
  CHATAPP_AUTH_TOKEN: 'TWILIO_AUTH_TOKEN',
  CHATAPP_API_BASE_URL: 'TWILIO_API_BASE_URL',
} as const;

type Variables = typeof variables;
export type Env = { [K in keyof Variables]: z.output<Variables[K][0]> };

const envSchema = z.object(
  Object.fromEntries(Object.entries(variables).map(([k, [schema]]) => [k, schema])) as {
    [K in keyof Variables]: Variables[K][0];
  },
);

export class ConfigError extends Error {}

/**
 * Parses an environment; throws one ConfigError naming every bad variable. `credentials: false` is for a
 * process that serves none of the API's routes (see configWithoutApiCredentials).
 */
export function parseEnv(source: NodeJS.ProcessEnv, options: { credentials?: boolean; migrateOnly?: boolean } = {}): Env {
  // Empty strings mean "unset", as in most .env tooling.
  const set = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string>;
  const retired = Object.entries(retiredVariables)
    .flatMap(([old, now]) => [old, `${old}_FILE`].filter((name) => set[name] !== undefined).map((name) => `${name}: no longer read; set ${now} instead (one Twilio account serves sms, voice and the messaging app)`));
  if (retired.length) throw new ConfigError(`Invalid configuration:\n${retired.map((p) => `  ${p}`).join('\n')}`);
  const cleaned = withFileValues(set);
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const env = result.data as Env;
  const unsafe = options.migrateOnly ? (env.NODE_ENV === 'production' && !env.DATABASE_URL ? ['DATABASE_URL: required when NODE_ENV=production'] : []) : startupSafetyProblems(env, options.credentials ?? true);
  if (unsafe.length) throw new ConfigError(`Invalid configuration:\n${unsafe.map((p) => `  ${p}`).join('\n')}`);
  return env;
}

/**
 * `<NAME>_FILE` for every variable: the value is read from that file (one trailing newline dropped),
 * as container secrets are mounted. Setting both NAME and NAME_FILE, or an unreadable file, is an error naming it.
 */
function withFileValues(source: Record<string, string>): Record<string, string> {
  const out = { ...source };
  const problems: string[] = [];
  for (const name of Object.keys(variables)) {
    const file = source[`${name}_FILE`];
    if (file === undefined) continue;
    if (source[name] !== undefined) {
      problems.push(`${name}_FILE: set either ${name} or ${name}_FILE, not both`);
      continue;
    }
    try {
      out[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return out;
}

/** Redis connection settings: REDIS_URL when set, else BUS_HOST, BUS_PORT and BUS_PASSWORD; with REDIS_SENTINELS, the master is found through them. */
function redisSettings(env: Env) {
  return { ...redisServer(env), sentinel: redisSentinel(env) };
}

function redisServer(env: Env) {
  if (!env.REDIS_URL) return { host: env.BUS_HOST, port: env.BUS_PORT, username: undefined, password: env.BUS_PASSWORD || undefined, db: 0, tls: undefined };
  const url = new URL(env.REDIS_URL);
  const host = url.hostname.replace(/^\[|\]$/g, '') || 'localhost';
  return {
    host,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number(url.pathname.replace(/^\//, '') || 0),
    tls: url.protocol === 'rediss:' ? { servername: host } : undefined,
  };
}

function redisSentinel(env: Env) {
  if (!env.REDIS_SENTINELS) return undefined;
  const sentinels = env.REDIS_SENTINELS.split(',').map((entry) => {
    const [host, port] = entry.trim().split(':');
    return { host: host!, port: Number(port) };
  });
  return { masterName: env.REDIS_SENTINEL_MASTER, sentinels, username: env.REDIS_SENTINEL_USERNAME, password: env.REDIS_SENTINEL_PASSWORD || undefined };
}

/** The role a process runs, from its entry file (api/main → web, workers/main → worker), for naming it on traces. */
function roleOf(entry: string): string {
  const match = /(tools-server|email-server|workers|api)[\\/]main\.[jt]s$/.exec(entry)?.[1];
  return ({ api: 'web', workers: 'worker', 'tools-server': 'tools', 'email-server': 'email' } as Record<string, string>)[match ?? ''] ?? 'process';
}

/** Whether development conveniences apply: `npm run dev` (SWITCHBOARD_DEV) or the test suite (NODE_ENV=test). */
export function conveniencesAllowed(env: Pick<Env, 'SWITCHBOARD_DEV' | 'NODE_ENV'>): boolean {
  return (env.SWITCHBOARD_DEV && env.NODE_ENV !== 'production') || env.NODE_ENV === 'test';
}

/** Shortest secret (API key, password, token) a start outside npm run dev and the tests accepts. */
export const MIN_SECRET_LENGTH = 16;
/** Whether this is the compiled platform (npm start, the Procfile roles under dist/), not the source that npm run dev and the tests run. */
const builtPlatform = import.meta.url.endsWith('.js');

/** Why a secret is too short (ADMIN_USER is a name, not a secret), or undefined. */
function tooShort(name: string, value: string): string | undefined {
  if (name === 'ADMIN_USER') return undefined;
  const values = name === 'API_KEYS' ? value.split(',').map((k) => k.trim()).filter(Boolean) : [value];
  return values.some((v) => v.length < MIN_SECRET_LENGTH) ? `must be at least ${MIN_SECRET_LENGTH} characters${name === 'API_KEYS' ? ' (each key)' : ''}` : undefined;
}

/** Credentials every start needs unless development conveniences apply, with the well-known values they must not have. */
const realCredentials = {
  API_KEYS: (v: string) => (v.split(',').map((k) => k.trim()).includes('dev-key') ? 'must not contain the development key dev-key' : undefined),
  ADMIN_USER: () => undefined,
  ADMIN_PASSWORD: (v: string) => (v === 'admin' ? 'must not be the development password admin' : undefined),
  ALERT_WEBHOOK_TOKEN: () => undefined,
  CRM_WEBHOOK_SECRET: () => undefined,
} as const satisfies Partial<Record<keyof Env, (value: string) => string | undefined>>;

/**
 * The one place that decides whether a configuration is safe to start with; each problem names its variable.
 * With NODE_ENV unset (development) or production, and no SWITCHBOARD_DEV, the API refuses to run on
 * well-known or absent credentials: a forgotten variable must not leave a route open. `built`: whether
 * this is the compiled platform, which refuses the development and test modes whatever NODE_ENV.
 */
export function startupSafetyProblems(env: Env, credentials = true, built = builtPlatform): string[] {
  const problems: string[] = [];
  const why = env.NODE_ENV === 'production' ? 'required when NODE_ENV=production' : 'required outside npm run dev (SWITCHBOARD_DEV) and tests (NODE_ENV=test)';
  if (env.NODE_ENV === 'production') {
    for (const name of ['DATABASE_URL', 'PUBLIC_URL', 'OIDC_ISSUER_URL', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const) if (!env[name]) problems.push(`${name}: ${why}`);
    // Sign-in cookies are Secure and the provider redirects back here: plain http would leak both.
    if (env.PUBLIC_URL && !env.PUBLIC_URL.startsWith('https://')) problems.push('PUBLIC_URL: must be https when NODE_ENV=production');
  }
  // Development conveniences (dev-key, admin/admin, unsigned webhooks) never reach production or the built platform.
  if (env.SWITCHBOARD_DEV && env.NODE_ENV === 'production') problems.push('SWITCHBOARD_DEV: must not be set when NODE_ENV=production');
  else if (env.SWITCHBOARD_DEV && credentials && built) problems.push('SWITCHBOARD_DEV: is for npm run dev only; the built platform (npm start, the Procfile roles) refuses it');
  // NODE_ENV=test grants the same conveniences, so the built platform refuses it as it refuses SWITCHBOARD_DEV.
  if (env.NODE_ENV === 'test' && built) problems.push('NODE_ENV: test is for the test suite only; the built platform (npm start, the Procfile roles) refuses it (use development or production)');
  if (env.NODE_ENV === 'production' && credentials && !env.METRICS_TOKEN) problems.push(`METRICS_TOKEN: ${why} (/metrics is not left open)`);
  if (credentials && !conveniencesAllowed(env)) {
    for (const [name, check] of Object.entries(realCredentials) as Array<[keyof typeof realCredentials, (v: string) => string | undefined]>) {
      const value = env[name];
      const problem = value ? check(value) ?? tooShort(name, value) : why;
      if (problem) problems.push(`${name}: ${problem}`);
    }
    if (env.METRICS_TOKEN && env.METRICS_TOKEN.length < MIN_SECRET_LENGTH) problems.push(`METRICS_TOKEN: ${tooShort('METRICS_TOKEN', env.METRICS_TOKEN)}`);
  }
  return problems;
}

function nested(env: Env) {
  const dev = conveniencesAllowed(env);
  return {
    env: env.NODE_ENV,
    isProduction: env.NODE_ENV === 'production',
    http: { port: env.PORT, host: env.HOST, bodyLimit: env.BODY_LIMIT, outageDeadlineMs: env.API_OUTAGE_DEADLINE_MS, trustProxy: trustProxyOf(env.TRUST_PROXY)!, proxyHeader: env.TRUST_PROXY_HEADER },
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    input: { maxJsonDepth: env.MAX_JSON_DEPTH },
    // Tests are silent unless a test asks for logs (LOG_LEVEL set).
    log: { level: env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info') },
    metrics: { token: env.METRICS_TOKEN },
    streams: { max: env.SSE_MAX_STREAMS, maxPerKey: env.SSE_MAX_STREAMS_PER_KEY },
    auth: {
      apiKeys: env.API_KEYS ? env.API_KEYS.split(',').map((k) => k.trim()).filter(Boolean) : dev ? ['dev-key'] : [],
      admin: { user: env.ADMIN_USER || (dev ? 'admin' : ''), password: env.ADMIN_PASSWORD || (dev ? 'admin' : '') },
      oidc: {
        issuerUrl: env.OIDC_ISSUER_URL,
        clientId: env.OIDC_CLIENT_ID,
        clientSecret: env.OIDC_CLIENT_SECRET,
        rolesClaim: env.OIDC_ROLES_CLAIM,
        roleMap: Object.fromEntries(
          (env.OIDC_ROLE_MAP ?? '').split(',').filter((p) => p.includes(':')).map((p) => {
            const at = p.lastIndexOf(':');
            return [p.slice(0, at).trim(), p.slice(at + 1).trim()];
          }),
        ) as Record<string, 'sre' | 'staff' | 'sales'>,
      },
      session: { idle: env.AUTH_SESSION_IDLE, max: env.AUTH_SESSION_MAX, rolesRefresh: env.AUTH_ROLES_REFRESH },
      devOidcPort: env.DEV_OIDC_PORT,
    },
    db: {
      url: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard',
      poolMax: env.DATABASE_POOL_MAX,
      poolMin: Math.min(env.DATABASE_POOL_MIN, env.DATABASE_POOL_MAX),
      devEmbeddedPort: env.DEV_POSTGRES_PORT,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      acquireTimeoutMs: env.DATABASE_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      apiQueryTimeoutMs: env.API_QUERY_TIMEOUT_MS,
    },
    redis: { ...redisSettings(env), commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS, allowVolatile: env.REDIS_ALLOW_VOLATILE },
    queues: { prefix: env.QUEUE_PREFIX },
    telemetry: {
      enabled: !env.OTEL_SDK_DISABLED && Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
      serviceName: env.OTEL_SERVICE_NAME ?? `switchboard-${roleOf(process.argv[1] ?? '')}`,
    },
    retention: {
      pruneCron: env.RETENTION_PRUNE_CRON,
      alertPayloads: env.RETENTION_ALERT_PAYLOADS,
      alertHistory: env.RETENTION_ALERT_HISTORY,
      toolCalls: env.RETENTION_TOOL_CALLS,
      sessionEvents: env.RETENTION_SESSION_EVENTS,
      discoveryRuns: env.RETENTION_DISCOVERY_RUNS,
      runbookExecutions: env.RETENTION_RUNBOOK_EXECUTIONS,
      webhookDeliveries: env.RETENTION_WEBHOOK_DELIVERIES,
      agentSteps: env.RETENTION_AGENT_STEPS,
    },
    shutdown: { drainDelayMs: env.SHUTDOWN_DRAIN_DELAY_MS, timeoutMs: env.SHUTDOWN_TIMEOUT_MS },
    workers: {
      metricsPort: env.WORKER_METRICS_PORT,
      metricsHost: env.WORKER_METRICS_HOST,
      queues: env.WORKER_QUEUES?.split(',').map((q) => q.trim()).filter(Boolean),
    },
    devMonitoring: { enabled: env.DEV_MONITORING, prometheusPort: env.DEV_PROMETHEUS_PORT, alertmanagerPort: env.DEV_ALERTMANAGER_PORT },
    sessions: {
      enabled: env.SERVICE_SESSION_SYSTEM,
      resumeWindow: env.SERVICE_SESSION_RESUME_WINDOW,
      maxHistory: env.SERVICE_SESSION_MAX_HISTORY,
      keepAliveSeconds: env.SESSION_SSE_KEEPALIVE_SECONDS,
      publishWaitMs: env.SESSION_PUBLISH_WAIT_MS,
      expiryCron: env.SESSION_EXPIRY_CRON,
      webchatIdleSeconds: env.WEBCHAT_IDLE_SECONDS,
    },
    stream: { lanes: env.STREAM_LANES, lockTimeoutMs: env.STREAM_LOCK_TIMEOUT_MS, sessionCacheMs: env.STREAM_SESSION_CACHE_MS },
    chatapp: {
      fromNumber: env.CHATAPP_FROM_NUMBER,
      publicUrl: env.CHATAPP_PUBLIC_URL,
      timeoutMs: env.CHATAPP_TIMEOUT_MS,
      templateSids: Object.fromEntries(
        (env.CHATAPP_TEMPLATE_SIDS ?? '').split(',').filter((p) => p.includes('=')).map((p) => p.split('=').map((x) => x.trim()) as [string, string]),
      ) as Record<string, string>,
    },
    channels: {
      publicUrl: env.CHANNELS_PUBLIC_URL?.replace(/\/+$/, ''),
      idleSeconds: env.CHANNELS_IDLE_SECONDS,
      twilio: {
        accountSid: env.TWILIO_ACCOUNT_SID,
        authToken: env.TWILIO_AUTH_TOKEN,
        apiBaseUrl: env.TWILIO_API_BASE_URL,
        timeoutMs: env.CHATAPP_TIMEOUT_MS,
      },
      sms: { from: env.SMS_FROM_NUMBER },
      email: { address: env.EMAIL_ADDRESS, smtpUrl: env.EMAIL_SMTP_URL, listenPort: env.EMAIL_LISTEN_PORT, listenHost: env.EMAIL_LISTEN_HOST, maxBytes: env.EMAIL_MAX_BYTES, trustedAuthservId: env.EMAIL_TRUSTED_AUTHSERV_ID, healthPort: env.EMAIL_HEALTH_PORT, relays: env.EMAIL_RELAYS?.split(',').map((r) => r.trim()).filter(Boolean), maxClients: env.EMAIL_MAX_CLIENTS },
      voice: {
        welcomeGreeting: env.VOICE_WELCOME_GREETING,
        unknownCallerMessage: env.VOICE_UNKNOWN_CALLER_MESSAGE,
        relayTokenSeconds: env.VOICE_RELAY_TOKEN_SECONDS,
        maxSocketsPerCall: env.VOICE_MAX_SOCKETS_PER_CALL,
        maxTurnsPerCall: env.VOICE_MAX_TURNS_PER_CALL,
        idleSeconds: env.VOICE_IDLE_SECONDS,
        trustAttestationA: env.VOICE_TRUST_ATTESTATION_A,
      },
      slack: {
        signingSecret: env.SLACK_SIGNING_SECRET,
        botToken: env.SLACK_BOT_TOKEN,
        apiUrl: env.SLACK_API_URL,
        teamIds: idList(env.SLACK_TEAM_IDS),
        enterpriseIds: idList(env.SLACK_ENTERPRISE_IDS),
        linkMinutes: env.SLACK_LINK_MINUTES,
        timeoutMs: env.CHATAPP_TIMEOUT_MS,
      },
    },
    llm: { provider: env.LLM_PROVIDER, apiKey: env.LLM_API_KEY, baseUrl: env.LLM_BASE_URL, model: env.LLM_MODEL },
    tools: {
      callTimeoutMs: env.TOOL_CALL_TIMEOUT_MS,
      resultMaxBytes: env.TOOL_RESULT_MAX_BYTES,
      workflowTag: env.WORKFLOW_TOOL_TAG,
      workflowTtlSeconds: env.WORKFLOW_TOOLS_TTL,
      delegationWaitMs: env.AGENT_DELEGATION_WAIT_MS,
      serviceUserPhone: env.AGENT_SERVICE_USER_PHONE,
      confirmationTtlSeconds: env.CONFIRMATION_TTL_SECONDS,
    },
    crm: { webhookSecret: env.CRM_WEBHOOK_SECRET, replayWindowSeconds: env.CRM_WEBHOOK_REPLAY_WINDOW, batchMax: env.CRM_BATCH_MAX, batchWaitMs: env.CRM_BATCH_WAIT_MS },
    portal: {
      documentMaxBytes: env.DOCUMENT_MAX_BYTES,
      extractTimeoutMs: env.DOCUMENT_EXTRACT_TIMEOUT_MS,
      extractMaxMemoryMb: env.DOCUMENT_EXTRACT_MAX_MEMORY_MB,
      extractMaxAddressSpaceMb: env.DOCUMENT_EXTRACT_MAX_ADDRESS_SPACE_MB,
      agentApiUrl: env.AGENT_API_URL,
      agentApiKey: env.AGENT_API_KEY,
    },
    sre: {
      alertWebhookToken: env.ALERT_WEBHOOK_TOKEN,
      flapThreshold: env.FLAP_THRESHOLD,
      flapWindowSeconds: env.FLAP_WINDOW,
      retryWindowSeconds: env.ALERT_RETRY_WINDOW,
      escalationAfterSeconds: env.ESCALATION_AFTER,
      escalationWebhookUrl: env.ESCALATION_WEBHOOK_URL,
      issueTracker: { url: env.ISSUE_TRACKER_URL, token: env.ISSUE_TRACKER_TOKEN, projectId: env.ISSUE_TRACKER_PROJECT_ID },
      automation: { url: env.AUTOMATION_URL, apiKey: env.AUTOMATION_API_KEY },
      discovery: {
        enabled: env.DISCOVERY_ENABLED,
        intervalSeconds: env.DISCOVERY_INTERVAL,
        containerRuntimeHost: env.CONTAINER_RUNTIME_HOST,
        metricsUrl: env.METRICS_URL,
        proxyApiUrl: env.PROXY_API_URL,
        allowedTargets: env.DISCOVERY_ALLOWED_TARGETS.split(',').map((t) => t.trim()).filter(Boolean),
      },
      monitors: { autoApply: env.MONITORS_AUTO_APPLY, modelAuto: env.MONITORS_MODEL_AUTO, rulesDir: env.RULES_DIR, deployWaitMs: env.MONITORS_DEPLOY_WAIT_MS, platformRules: env.MONITORS_PLATFORM_RULES },
    },
    authority: { keyCacheMs: env.API_KEY_CACHE_MS },
    limits: {
      uploadsPerHour: env.LIMIT_UPLOADS_PER_HOUR,
      uploadBytesPerHour: env.LIMIT_UPLOAD_BYTES_PER_HOUR,
      uploadsConcurrent: env.LIMIT_UPLOADS_CONCURRENT,
      streamsPerPerson: env.LIMIT_STREAMS_PER_PERSON,
      signInStartsPerMinute: env.LIMIT_SIGNIN_STARTS_PER_MINUTE,
      publishesPerSessionPerMinute: env.LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE,
      publishesPerKeyPerMinute: env.LIMIT_PUBLISHES_PER_KEY_PER_MINUTE,
      phoneCodesPerHour: env.LIMIT_PHONE_CODES_PER_HOUR,
      phoneCodeAttempts: env.LIMIT_PHONE_CODE_ATTEMPTS,
      emailConnectionsPerMinute: env.LIMIT_EMAIL_CONNECTIONS_PER_MINUTE,
      emailMessagesPerSenderPerHour: env.LIMIT_EMAIL_MESSAGES_PER_SENDER_PER_HOUR,
      voicePinAttempts: env.LIMIT_VOICE_PIN_ATTEMPTS,
      phoneCodesPerNumberPerHour: env.LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR,
      phoneCodesTotalPerHour: env.LIMIT_PHONE_CODES_TOTAL_PER_HOUR,
      agentTurnsPerMinute: env.LIMIT_AGENT_TURNS_PER_MINUTE,
    },
    phoneCodeTtlMinutes: env.PHONE_CODE_TTL_MINUTES,
    toolServer: {
      port: env.MCP_SERVICE_PORT,
      publicUrl: (env.MCP_SERVICE_URL ?? `http://localhost:${env.MCP_SERVICE_PORT}`).replace(/\/+$/, ''),
      tokens: env.MCP_SERVICE_TOKENS.split(',').map((t) => t.trim()).filter(Boolean),
      identityBaseUrl: env.IDENTITY_BASE_URL?.replace(/\/+$/, ''),
      tracker: {
        apiUrl: env.ISSUE_TRACKER_API_URL?.replace(/\/+$/, ''),
        baseUrl: (env.ISSUE_TRACKER_BASE_URL ?? env.ISSUE_TRACKER_API_URL)?.replace(/\/+$/, ''),
        projectPath: env.ISSUE_TRACKER_PROJECT_PATH,
        verifySsl: env.ISSUE_TRACKER_VERIFY_SSL,
        token: env.ISSUE_TRACKER_MCP_TOKEN,
      },
    },
  };
}

export type Config = ReturnType<typeof nested>;

/** Builds the typed, nested configuration from an environment (`credentials: false`: see parseEnv). */
export function loadConfig(source: NodeJS.ProcessEnv = process.env, options: { credentials?: boolean; migrateOnly?: boolean } = {}): Config {
  return nested(parseEnv(source, options));
}

let current: Config | undefined;

/**
 * The configuration of a process that serves none of the API's routes (the stdio MCP server, the tools
 * role with its own tokens, CLI helpers): the routes' credentials are not its concern. Later config() calls return it.
 */
export function configWithoutApiCredentials(): Config {
  current ??= loadConfig(process.env, { credentials: false });
  return current;
}

/** The configuration of the release step (migrate): only DATABASE_URL is required. Later config() calls return it. */
export function configForMigrations(): Config {
  current ??= loadConfig(process.env, { credentials: false, migrateOnly: true });
  return current;
}

/** The process configuration, parsed from process.env on first use. */
export function config(): Config {
  current ??= loadConfig();
  return current;
}
