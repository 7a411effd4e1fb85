/**
 * CPU accounting of the whole machine during a benchmark: the roles are not the only consumers on
 * a 2-core box (Postgres, Redis and the load generator share it), and targets are lost when the
 * machine saturates or the host takes its CPUs away, so benchmarks print where every CPU second went.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The services counted by command name, every process of each: name → command prefix. */
const services = { postgres: 'postgres', redis: 'redis-server' } as const;

/** CPU seconds used so far: per named process (pid) and service, and machine-wide. */
export interface CpuSnapshot {
  /** User + system seconds of each named pid, plus `postgres` and `redis` (all their processes). */
  used: Record<string, number>;
  /** Machine-wide seconds (all CPUs): busy, softirq (loopback networking, charged to no process), stolen by the host, idle (+ iowait). */
  machine: { busy: number; softirq: number; steal: number; idle: number };
  /** Seconds of each process of each service, so a process that exits between two snapshots does not count as negative use. */
  servicePids: Record<string, Record<string, number>>;
  /** Seconds the main thread of each named pid, and of Redis, has spent runnable but waiting for a CPU. */
  waited: Record<string, number>;
}

const statSeconds = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/** CPU seconds (user + system) a process has used. */
export function processCpuSeconds(pid: number): number {
  return statSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * Seconds a process's main thread has spent runnable but waiting for a CPU (/proc/<pid>/schedstat, the
 * kernel's run-queue delay). For a Node role that thread runs the event loop: every event it handles
 * waits that long on top of its own work, which on a machine with more runnable processes than cores
 * shows in the tail latency however fast the code is. 0 when the process is gone.
 */
export function runQueueWaitSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by the named pids (e.g. { api: pid, worker: pid }), Postgres, Redis and the machine. */
export function cpuSnapshot(pids: Record<string, number> = {}): CpuSnapshot {
  const names = new Map(Object.entries(pids).map(([name, pid]) => [String(pid), name]));
  const used: Record<string, number> = Object.fromEntries([...Object.keys(pids), ...Object.keys(services)].map((n) => [n, 0]));
  const servicePids: Record<string, Record<string, number>> = Object.fromEntries(Object.keys(services).map((n) => [n, {}]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const service = Object.entries(services).find(([, prefix]) => command.startsWith(prefix))?.[0];
    const name = names.get(entry) ?? service;
    if (name) used[name]! += statSeconds(stat);
    if (service && !names.has(entry)) servicePids[service]![entry] = statSeconds(stat);
  }
  const waited: Record<string, number> = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, runQueueWaitSeconds(pid)]));
  // Redis runs its commands on its main thread (summed over the machine's redis-server processes).
  waited.redis = Object.keys(servicePids.redis!).reduce((sum, pid) => sum + runQueueWaitSeconds(Number(pid)), 0);
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map((v) => Number(v) / 100) as number[];
  return { used, servicePids, waited, machine: { busy: user! + nice! + system! + irq! + softirq!, softirq: softirq!, steal: steal!, idle: idle! + iowait! } };
}

/** What was used between two snapshots, and the machine's busy and steal shares of that time. */
export function cpuUsed(before: CpuSnapshot, after: CpuSnapshot) {
  const used = Object.fromEntries(Object.keys(after.used).map((n) => [n, after.used[n]! - (before.used[n] ?? 0)]));
  // A service's use is summed per process alive at the end (a new one from zero): the test suites
  // of others start and end Postgres backends meanwhile, and their exit must not subtract.
  for (const [service, now] of Object.entries(after.servicePids)) {
    used[service] = Object.entries(now).reduce((sum, [pid, seconds]) => sum + seconds - (before.servicePids[service]?.[pid] ?? 0), 0);
  }
  const machine = {
    busy: after.machine.busy - before.machine.busy,
    softirq: after.machine.softirq - before.machine.softirq,
    steal: after.machine.steal - before.machine.steal,
    idle: after.machine.idle - before.machine.idle,
  };
  const total = machine.busy + machine.steal + machine.idle;
  return { used, machine, busyShare: machine.busy / total, stealShare: machine.steal / total };
}
