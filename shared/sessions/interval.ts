/** Intervals as clients write them: a session's resume window is stored as a Postgres interval and shown in the syntax it was given in. */

const unitNames: Record<string, string> = { year: 'year', years: 'year', mon: 'month', mons: 'month', day: 'day', days: 'day' };

/** Renders Postgres' interval text ("1 day 02:30:00", "24:00:00") in the unit syntax clients send ("1 day 2 hours 30 minutes", "24 hours"). */
export function compactInterval(text: string): string {
  const parts: string[] = [];
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  for (const [, n, unit] of text.matchAll(/(-?\d+) (years?|mons?|days?)/g)) parts.push(plural(Number(n), unitNames[unit!]!));
  const clock = /(\d+):(\d+):(\d+(?:\.\d+)?)/.exec(text);
  if (clock) {
    const [h, m, s] = [Number(clock[1]), Number(clock[2]), Number(clock[3])];
    if (h) parts.push(plural(h, 'hour'));
    if (m) parts.push(plural(m, 'minute'));
    if (s) parts.push(plural(s, 'second'));
  }
  return parts.join(' ') || '0 seconds';
}
