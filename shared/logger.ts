/** Structured JSON logs (pino); readable when a developer watches a terminal. */
import { pino } from 'pino';
import { config } from './config.js';

function build() {
  const cfg = config();
  const pretty = cfg.env === 'development' && process.stdout.isTTY;
  return pino({
    level: cfg.env === 'test' && !process.env.LOG_LEVEL ? 'silent' : cfg.log.level,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.password', '*.token', '*.secret'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}

let root: pino.Logger | undefined;

/** The process logger; children carry a module name. */
export function logger(module?: string): pino.Logger {
  root ??= build();
  return module ? root.child({ module }) : root;
}
