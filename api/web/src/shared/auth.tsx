/** The signed-in person (GET /api/global/auth/me) for the whole app; no session sends the browser to sign-in. */
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { fetchClient, setCsrfToken, type Schemas } from '../api/client';
import { ProblemAlert } from './problem';
import { Loading } from './states';

export type Me = Schemas['SignedInPerson'];

const MeContext = createContext<Me | null>(null);

export const signInUrl = () => `/api/global/auth/login?return_to=${encodeURIComponent(location.pathname + location.search)}`;

async function fetchMe(): Promise<Me | null> {
  const { data, error, response } = await fetchClient.GET('/api/global/auth/me');
  if (response.status === 401) return null;
  if (error) throw error;
  return data;
}

/** Ends the session on the server, then at the provider when it has an end-session address. */
export async function signOut(): Promise<void> {
  const { data } = await fetchClient.POST('/api/global/auth/logout');
  setCsrfToken(undefined);
  location.assign(data?.end_session_url ?? '/');
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const me = useQuery({ queryKey: ['auth', 'me'], queryFn: fetchMe, staleTime: 60_000 });
  useEffect(() => {
    if (me.data === null) location.assign(signInUrl());
    setCsrfToken(me.data?.csrf_token);
  }, [me.data]);
  if (me.isError) return <ProblemAlert error={me.error} />;
  if (!me.data) return <Loading label="Checking your session…" />;
  return <MeContext.Provider value={me.data}>{children}</MeContext.Provider>;
}

/** The signed-in person. */
export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside AuthProvider');
  return me;
}

/** The role shown in the header: the strongest one the person holds. */
export const mainRole = (me: Me) => (me.roles.includes('sre') ? 'sre' : me.roles.includes('staff') ? 'staff' : me.roles.includes('sales') ? 'sales' : 'user');

/** The name the API records for this person's actions (as actorOf on the server: name, else email, else subject). */
export const actorName = (me: Me) => me.name || me.email || me.subject;
