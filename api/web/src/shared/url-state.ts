/** View state in the URL: filters and the page are search params, so a view can be shared. */
import { useSearchParams } from 'react-router';

export function useUrlState<K extends string>(keys: readonly K[]) {
  const [params, setParams] = useSearchParams();
  const values = Object.fromEntries(keys.map((k) => [k, params.get(k) ?? ''])) as Record<K, string>;
  /** Sets some params (empty removes them); any filter change returns to the first page. */
  const set = (patch: Partial<Record<K | 'page', string>>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch) as Array<[string, string | undefined]>) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    if (!('page' in patch)) next.delete('page');
    setParams(next, { replace: true });
  };
  const page = Math.max(1, Number(params.get('page') ?? 1) || 1);
  return { values, set, page, setPage: (p: number) => set({ page: p > 1 ? String(p) : '' } as Partial<Record<K | 'page', string>>) };
}

/** `undefined` for empty strings, so unset filters stay out of the request. */
export const opt = (v: string) => (v === '' ? undefined : v);
