/**
 * CPU accounting of the whole machine during a benchmark: the roles are not the only consumers on
 * a 2-core box (Postgres, Redis and the load generator share it), and latency targets are lost
 * when the machine saturates, so benchmarks print where every CPU second went.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used. */
export function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds used so far by every live process of each command name (postgres, redis-server, …). */
function cpuByCommand(names: readonly string[]): Record<string, number> {
  const totals = Object.fromEntries(names.map((n) => [n, 0]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (command in totals) totals[command]! += processCpuSeconds(Number(entry));
  }
  return totals;
}

/** The machine's busy and steal jiffies (all CPUs) from /proc/stat. */
function machineTicks(): { busy: number; steal: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
}

export interface CpuWindow {
  /** Ends the window: CPU seconds per named service and the machine's busy and steal shares. */
  end(): { services: Record<string, number>; busyShare: number; stealShare: number };
}

/** Starts measuring the CPU of the named services (by command name) and of the whole machine. */
export function cpuWindow(services: readonly string[] = ['postgres', 'redis-server']): CpuWindow {
  const before = cpuByCommand(services);
  const ticks = machineTicks();
  return {
    end() {
      const after = cpuByCommand(services);
      const now = machineTicks();
      const total = now.total - ticks.total;
      return {
        services: Object.fromEntries(services.map((s) => [s, after[s]! - before[s]!])),
        busyShare: (now.busy - ticks.busy) / total,
        stealShare: (now.steal - ticks.steal) / total,
      };
    },
  };
}
