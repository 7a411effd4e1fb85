/** Providers and routes. Each screen is its own chunk (React.lazy), so the first load stays small. */
import { lazy, type ReactNode } from 'react';
import { MantineProvider, createTheme } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { queryClient } from '../api/client';
import { AuthProvider, useMe } from '../shared/auth';
import { useSreEvents } from '../shared/live';
import { Shell } from './Shell';
import { ComingSoon, Forbidden, NotFound } from '../portal/placeholders';

const AlertsPage = lazy(() => import('../admin/alerts/AlertsPage'));
const AlertDetail = lazy(() => import('../admin/alerts/AlertDetail'));
const SilencesPage = lazy(() => import('../admin/silences/SilencesPage'));
const MonitorsPage = lazy(() => import('../admin/cmdb/MonitorsPage'));
const IncidentsPage = lazy(() => import('../admin/incidents/IncidentsPage'));
const IncidentDetail = lazy(() => import('../admin/incidents/IncidentDetail'));
const EntitiesPage = lazy(() => import('../admin/cmdb/EntitiesPage'));
const EntityDetail = lazy(() => import('../admin/cmdb/EntityDetail'));
const DiscoveryPage = lazy(() => import('../admin/discovery/DiscoveryPage'));
const RunbooksPage = lazy(() => import('../admin/runbooks/RunbooksPage'));
const RunbookDetail = lazy(() => import('../admin/runbooks/RunbookDetail'));

/** The console needs the sre role (the server refuses the API too; this keeps the page honest). */
function SreOnly({ children }: { children: ReactNode }) {
  const me = useMe();
  if (!me.roles.includes('sre')) return <Forbidden />;
  return <SreLive>{children}</SreLive>;
}

function SreLive({ children }: { children: ReactNode }) {
  useSreEvents();
  return <>{children}</>;
}

function Home() {
  const me = useMe();
  return <Navigate to={me.roles.includes('sre') ? '/admin' : '/portal'} replace />;
}

/** Inter comes from @fontsource (bundled, no CDN). */
const theme = createTheme({ fontFamily: 'Inter, system-ui, sans-serif', headings: { fontFamily: 'Inter, system-ui, sans-serif' } });

const portalPaths = ['/portal', '/contacts', '/documents', '/cases', '/profile', '/history', '/automations'];

export function App() {
  return (
    <MantineProvider theme={theme} defaultColorScheme="light">
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <AuthProvider>
            <Shell>
              <Routes>
                <Route path="/" element={<Home />} />
                <Route path="/admin" element={<Navigate to="/admin/alerts" replace />} />
                <Route path="/admin/alerts" element={<SreOnly><AlertsPage /></SreOnly>} />
                <Route path="/admin/alerts/:id" element={<SreOnly><AlertDetail /></SreOnly>} />
                <Route path="/admin/silences" element={<SreOnly><SilencesPage /></SreOnly>} />
                <Route path="/admin/incidents" element={<SreOnly><IncidentsPage /></SreOnly>} />
                <Route path="/admin/incidents/:id" element={<SreOnly><IncidentDetail /></SreOnly>} />
                <Route path="/admin/cmdb" element={<SreOnly><EntitiesPage /></SreOnly>} />
                <Route path="/admin/cmdb/:id" element={<SreOnly><EntityDetail /></SreOnly>} />
                <Route path="/admin/monitors" element={<SreOnly><MonitorsPage /></SreOnly>} />
                <Route path="/admin/discovery" element={<SreOnly><DiscoveryPage /></SreOnly>} />
                <Route path="/admin/runbooks" element={<SreOnly><RunbooksPage /></SreOnly>} />
                <Route path="/admin/runbooks/:id" element={<SreOnly><RunbookDetail /></SreOnly>} />
                <Route path="/admin/*" element={<SreOnly><NotFound /></SreOnly>} />
                {portalPaths.map((p) => (
                  <Route key={p} path={`${p}/*`} element={<ComingSoon />} />
                ))}
                <Route path="*" element={<NotFound />} />
              </Routes>
            </Shell>
          </AuthProvider>
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  );
}
