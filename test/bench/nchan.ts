/**
 * nchan (nginx's pub/sub module, Redis storage) as the same-run anchor of bench:sessions: the
 * server people would pick instead of switchboard for fan-out over SSE. Debian's nginx with
 * libnginx-mod-nchan; the benchmark writes its own nginx.conf into a temporary prefix directory,
 * keeps its keys under its own Redis namespace and removes both afterwards.
 *
 * Fan-out mirrors a switchboard session: one nchan channel per (session, channel) — where that
 * channel's client publishes — and each channel's subscriber multiplexes the session's other three
 * channels in one EventSource stream (nchan_channel_id with three ids). A message is stored once and
 * reaches exactly the 3 other channels' subscribers, as switchboard's session channel with the own
 * channel skipped does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { freePort } from '../helpers/ports.js';
import { redisAddress, type RedisAddress } from '../helpers/redis-keys.js';
import { sleep } from './bench-platform.js';

export const nginxBinary = '/usr/sbin/nginx';
export const nchanModule = '/usr/lib/nginx/modules/ngx_nchan_module.so';

export interface Nchan {
  url: string;
  /** nginx master and worker pids (CPU accounting). */
  pids(): number[];
  /** Where channel `channel` of `session` publishes. */
  publishPath(session: string, channel: string): string;
  /** The stream of `channel`'s subscriber: the session's other channels, multiplexed. */
  subscribePath(session: string, otherChannels: readonly string[]): string;
  stop(): Promise<void>;
}

/** Starts nginx with nchan on a free port; `workers` worker processes; keys under `<namespace>:`. */
export async function startNchan(namespace: string, workers: number, redis: RedisAddress = redisAddress()): Promise<Nchan> {
  if (!existsSync(nginxBinary) || !existsSync(nchanModule)) throw new Error(`nchan baseline needs ${nginxBinary} and ${nchanModule} (apt-get install nginx libnginx-mod-nchan), or BENCH_SIDES=switchboard`);
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-nchan-'));
  const port = await freePort();
  const auth = redis.password ? `:${encodeURIComponent(redis.password)}@` : '';
  const conf = `
load_module ${nchanModule};
worker_processes ${workers};
worker_rlimit_nofile 16384;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 65s;
  upstream bench_redis { nchan_redis_server redis://${auth}${redis.host}:${redis.port}; }
  nchan_redis_namespace "${namespace}";
  # Messages are kept as switchboard's bus keeps them: not beyond what a reconnect needs.
  nchan_message_timeout 5m;
  nchan_message_buffer_length 10;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location ~ ^/pub/([^/]+)/([^/]+)$ {
      nchan_publisher http;
      nchan_channel_id "$1-$2";
      nchan_redis_pass bench_redis;
    }
    location ~ ^/sub/([^/]+)/([^/]+)/([^/]+)/([^/]+)$ {
      nchan_subscriber eventsource;
      nchan_channel_id "$1-$2" "$1-$3" "$1-$4";
      nchan_subscriber_first_message newest;
      nchan_redis_pass bench_redis;
    }
    location = /ready { return 200 "ok"; }
  }
}
`;
  writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const child: ChildProcess = spawn(nginxBinary, ['-p', dir, '-c', 'nginx.conf', '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr}${readFileSync(path.join(dir, 'error.log'), 'utf8')}`);
    const ok = await new Promise<boolean>((resolve) => http.get(`${url}/ready`, (res) => (res.resume(), resolve(res.statusCode === 200))).on('error', () => resolve(false)));
    if (ok) break;
    if (i > 100) throw new Error(`nginx did not answer on ${url}: ${stderr}`);
    await sleep(100);
  }
  return {
    url,
    pids: () => [child.pid!, ...childrenOf(child.pid!)],
    publishPath: (session, channel) => `/pub/${session}/${channel}`,
    subscribePath: (session, others) => `/sub/${session}/${others.join('/')}`,
    async stop() {
      if (child.exitCode === null) {
        // SIGQUIT: nginx's graceful stop; its open streams end.
        child.kill('SIGQUIT');
        const exited = new Promise((r) => child.once('exit', r));
        if ((await Promise.race([exited, sleep(5_000).then(() => 'late')])) === 'late') {
          child.kill('SIGKILL');
          await exited;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Direct children of a process (nginx's workers), from /proc. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
