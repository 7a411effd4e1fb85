/**
 * Round trips each process makes to Redis and Postgres, read from outside the processes: the TCP
 * data segments each socket to those ports has sent (`ss -tin`, the kernel's tcp_info). On loopback
 * a write is one segment (a segment holds 64 KB), so a pipelined burst of commands counts once, as
 * the round trip it is. Sockets opened and closed between two snapshots are not seen (pools here
 * keep theirs open).
 */
import { execFileSync } from 'node:child_process';

/** Data segments sent per socket (keyed by local address) to a port, with the pid owning it. */
export type SegmentSnapshot = Map<string, { pid: number; port: number; sent: number }>;

export function segmentSnapshot(ports: readonly number[]): SegmentSnapshot {
  const out: SegmentSnapshot = new Map();
  const filter = ports.map((p) => `dport = :${p}`).join(' or ');
  let text = '';
  try {
    text = execFileSync('ss', ['-tinpH', filter], { encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch {
    return out;
  }
  // Each socket is a line of addresses and users, then an indented line of tcp_info.
  const lines = text.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const head = /^\S+\s+\d+\s+\d+\s+(\S+)\s+\S+:(\d+)\s+users:\(\("[^"]*",pid=(\d+)/.exec(lines[i]!);
    if (!head) continue;
    const sent = /data_segs_out:(\d+)/.exec(lines[i + 1]!);
    out.set(head[1]!, { pid: Number(head[3]), port: Number(head[2]), sent: sent ? Number(sent[1]) : 0 });
    i++;
  }
  return out;
}

/** Segments sent between two snapshots, per group of pids and per port. */
export function roundTripsBetween(before: SegmentSnapshot, after: SegmentSnapshot, groups: Record<string, number[]>): Record<string, Record<number, number>> {
  const groupOf = new Map<number, string>();
  for (const [name, pids] of Object.entries(groups)) for (const pid of pids) groupOf.set(pid, name);
  const out: Record<string, Record<number, number>> = {};
  for (const [socket, now] of after) {
    const group = groupOf.get(now.pid);
    if (!group) continue;
    const delta = now.sent - (before.get(socket)?.sent ?? 0);
    out[group] ??= {};
    out[group][now.port] = (out[group][now.port] ?? 0) + delta;
  }
  return out;
}
