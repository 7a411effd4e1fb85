/** The signed-in person (from /api/global/auth/me) for the whole app; no session sends the browser to sign-in. */
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { setCsrfToken } from '../api/client';
import { Loading } from './states';

export interface Me {
  name: string;
  email?: string | null;
  roles: string[];
  csrf_token?: string;
}

const MeContext = createContext<Me | null>(null);

export const signInUrl = () => `/api/global/auth/login?return_to=${encodeURIComponent(location.pathname + location.search)}`;
export const signOutPath = '/api/global/auth/logout';

async function fetchMe(): Promise<Me | null> {
  const res = await fetch('/api/global/auth/me', { credentials: 'same-origin' });
  if (res.status === 401) return null;
  if (!res.ok) throw new Error(`Could not read the session (${res.status})`);
  return (await res.json()) as Me;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const me = useQuery({ queryKey: ['auth', 'me'], queryFn: fetchMe, staleTime: 60_000 });
  useEffect(() => {
    if (me.data === null) location.assign(signInUrl());
    setCsrfToken(me.data?.csrf_token);
  }, [me.data]);
  if (me.isPending || me.data === null) return <Loading label="Checking your session…" />;
  if (me.isError) return <Loading label={me.error.message} />;
  return <MeContext.Provider value={me.data}>{children}</MeContext.Provider>;
}

/** The signed-in person. */
export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside AuthProvider');
  return me;
}

/** The role shown in the header: the strongest one the person holds. */
export const mainRole = (me: Me) => (me.roles.includes('sre') ? 'sre' : me.roles.includes('staff') ? 'staff' : 'user');
