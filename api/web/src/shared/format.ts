/** Dates and durations as people read them. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function duration(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return '—';
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

export const statusColor: Record<string, string> = {
  firing: 'red',
  open: 'red',
  acknowledged: 'yellow',
  resolved: 'green',
  closed: 'gray',
  running: 'blue',
  queued: 'gray',
  succeeded: 'green',
  success: 'green',
  partial: 'orange',
  failed: 'red',
  timed_out: 'red',
  healthy: 'green',
  degraded: 'orange',
  unhealthy: 'red',
  unknown: 'gray',
  proposed: 'blue',
  applied: 'green',
  dismissed: 'gray',
  deployed: 'green',
  pending: 'yellow',
  active: 'grape',
  expired: 'gray',
  silenced: 'grape',
  disabled: 'gray',
};
