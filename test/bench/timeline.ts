/**
 * Second by second over the first seconds of a load (bench:sessions' cold start):
 * where a tail comes from shows in which second it happens and what the processes did then. Each
 * second: CPU of the API, the worker and this run's Postgres backends, how many backends there
 * are, Redis' client count, the API's event-loop delay (its /metrics; prom-client resets the
 * histogram at each scrape, so each figure is that second's), the jobs waiting and active in the
 * session lanes' queues, and the machine's I/O wait and stolen time: a second where every process
 * did less and I/O wait jumped is a disk stall under Postgres' commits, not our code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { streamLanes } from '../../shared/queues.js';
import { configWithoutApiCredentials } from '../../shared/config.js';
import { redisAddress } from '../helpers/redis-keys.js';
import { processCpuSeconds } from './machine-cpu.js';
import { fmt, now } from './bench-platform.js';
import { percentile } from './percentile.js';

export interface Sample {
  at: number;
  cpu: Record<string, number>;
  backends: number;
  redisClients: number;
  loopP99: number;
  loopMax: number;
  /** Jobs waiting and active in the session lanes' queues. */
  laneWait: number;
  laneActive: number;
  /** The machine's CPU time stolen by the hypervisor and waiting on I/O, in seconds since boot (/proc/stat). */
  steal: number;
  iowait: number;
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** Pids of the Postgres backends serving `database` (their command line names it). */
function backendsOf(database: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      const cmd = commandLine(pid);
      return cmd.startsWith('postgres:') && cmd.includes(` ${database} `);
    });
}

/** Seconds since boot of all CPUs: [iowait, steal] (/proc/stat counts in USER_HZ, 100 a second). */
function machineWaits(): [number, number] {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [fields[4]! / 100, fields[7]! / 100];
}

const cpuOf = (pids: number[]) =>
  pids.reduce((s, p) => {
    try {
      return s + processCpuSeconds(p);
    } catch {
      return s;
    }
  }, 0);

/** Samples once a second until stopped; `groups` names the pids of each role (read again each second). */
export function startTimeline(groups: () => Record<string, number[]>, database: string | undefined, metricsUrl: string | undefined, queuePrefix: string | undefined) {
  const samples: Sample[] = [];
  const redis = new Redis(redisAddress());
  let stopped = false;
  // The run's session lane queues, read through BullMQ on this connection; none without the run's prefix.
  const lanes = queuePrefix ? streamLanes(configWithoutApiCredentials().stream.lanes).map((name) => new Queue(name, { connection: redis, prefix: queuePrefix })) : [];
  /** Jobs waiting and active over every session lane queue; NaN without the run's prefix. */
  const laneJobs = async (): Promise<[number, number]> => {
    if (!lanes.length) return [NaN, NaN];
    const counts = await Promise.all(lanes.map((q) => q.getJobCounts('wait', 'active')));
    return [counts.reduce((n, c) => n + c.wait!, 0), counts.reduce((n, c) => n + c.active!, 0)];
  };
  const take = async () => {
    const g = groups();
    const cpu: Record<string, number> = {};
    for (const [name, pids] of Object.entries(g)) cpu[name] = cpuOf(pids);
    const backends = database ? backendsOf(database) : [];
    cpu.postgres = cpuOf(backends);
    const info = await redis.info('clients').catch(() => '');
    let loopP99 = NaN;
    let loopMax = NaN;
    if (metricsUrl) {
      const text = await fetch(metricsUrl).then((r) => r.text()).catch(() => '');
      const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) * 1000;
      loopP99 = gauge('nodejs_eventloop_lag_p99_seconds');
      loopMax = gauge('nodejs_eventloop_lag_max_seconds');
    }
    const [laneWait, laneActive] = await laneJobs();
    const [iowait, steal] = machineWaits();
    samples.push({ at: now(), iowait, steal, cpu, backends: backends.length, redisClients: Number(/connected_clients:(\d+)/.exec(info)?.[1] ?? NaN), loopP99, loopMax, laneWait, laneActive });
  };
  const loop = (async () => {
    await take();
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 1000));
      await take();
    }
  })();
  return {
    async stop(): Promise<Sample[]> {
      stopped = true;
      await loop;
      await Promise.all(lanes.map((q) => q.close()));
      redis.disconnect();
      return samples;
    },
  };
}

/** Lines of the first `seconds` seconds from `t0`: deliveries by the second they were sent in, beside that second's samples. */
export function timelineLines(t0: number, seconds: number, deliveries: Array<{ sent: number; latency: number }>, samples: Sample[]): string[] {
  const buckets: number[][] = Array.from({ length: seconds }, () => []);
  for (const d of deliveries) {
    const s = Math.floor((d.sent - t0) / 1000);
    if (s >= 0 && s < seconds) buckets[s]!.push(d.latency);
  }
  const lines = ['   s  deliveries    p50    p99    max  | CPU ms in that second: api worker postgres | PG backends  Redis clients | API loop delay p99 / max ms | lane jobs waiting / active | machine iowait / steal ms'];
  for (let s = 0; s < seconds; s++) {
    const sorted = buckets[s]!.sort((a, b) => a - b);
    const from = samples.find((x) => x.at >= t0 + s * 1000 - 500);
    const to = samples.find((x) => x.at >= t0 + (s + 1) * 1000 - 500);
    const cpu = (name: string) => (from && to ? fmt((to.cpu[name]! - from.cpu[name]!) * 1000, 0) : 'n/a');
    lines.push(
      `  ${String(s).padStart(2)}  ${String(sorted.length).padStart(10)} ${fmt(percentile(sorted, 50)).padStart(6)} ${fmt(percentile(sorted, 99)).padStart(6)} ${fmt(sorted.at(-1) ?? NaN).padStart(6)}  | ` +
        `${cpu('api').padStart(5)} ${cpu('worker').padStart(5)} ${cpu('postgres').padStart(5)} | ${String(to?.backends ?? 'n/a').padStart(4)} ${String(to?.redisClients ?? 'n/a').padStart(6)} | ${fmt(to?.loopP99 ?? NaN)} / ${fmt(to?.loopMax ?? NaN)} | ${fmt(to?.laneWait ?? NaN, 0)} / ${fmt(to?.laneActive ?? NaN, 0)} | ${from && to ? `${fmt((to.iowait - from.iowait) * 1000, 0)} / ${fmt((to.steal - from.steal) * 1000, 0)}` : 'n/a'}`,
    );
  }
  return lines;
}
