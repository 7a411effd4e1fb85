/** Structured JSON logs (pino); readable when a developer watches a terminal. */
import { pino } from 'pino';
import { config } from './config.js';
import { currentRequestId } from './request-context.js';

let toStderr = false;

/** Sends this process's logs to stderr (processes whose stdout is a protocol, e.g. MCP over stdio). Call before logging. */
export function logToStderr(): void {
  toStderr = true;
}

function build() {
  const cfg = config();
  const pretty = cfg.env === 'development' && process.stdout.isTTY;
  return pino({
    level: cfg.log.level,
    // Every line written while serving a request (or a job it enqueued) names the request.
    mixin: () => {
      const id = currentRequestId();
      return id ? { request_id: id } : {};
    },
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.password', '*.token', '*.secret'], censor: '[redacted]' },
    ...(pretty && !toStderr ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  }, toStderr ? pino.destination(2) : undefined);
}

let root: pino.Logger | undefined;
const modules = new Map<string, pino.Logger>();

/** The process logger; children carry a module name (one child per module, made on first use). */
export function logger(module?: string): pino.Logger {
  root ??= build();
  if (!module) return root;
  let child = modules.get(module);
  if (!child) modules.set(module, (child = root.child({ module })));
  return child;
}
