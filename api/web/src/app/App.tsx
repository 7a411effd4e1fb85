/** Providers and routes. Each screen is its own chunk (React.lazy), so the first load stays small. */
import { lazy, type ReactNode } from 'react';
import { MantineProvider, createTheme } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { queryClient } from '../api/client';
import { AuthProvider, useMe } from '../shared/auth';
import { useSreEvents } from '../shared/live';
import { useCrmEvents } from '../admin/crm/live';
import { Shell } from './Shell';
import { Forbidden, NotFound } from '../portal/placeholders';

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
const LeadsPage = lazy(() => import('../admin/crm/LeadsPage'));
const LeadDetail = lazy(() => import('../admin/crm/LeadDetail'));
const PipelinePage = lazy(() => import('../admin/crm/PipelinePage'));
const AccountsPage = lazy(() => import('../admin/crm/AccountsPage'));
const AccountDetail = lazy(() => import('../admin/crm/AccountDetail'));
const PortalHome = lazy(() => import('../portal/home/PortalHome'));
const DocumentsPage = lazy(() => import('../portal/documents/DocumentsPage'));
const DocumentDetail = lazy(() => import('../portal/documents/DocumentDetail'));
const ContactsPage = lazy(() => import('../portal/contacts/ContactsPage'));
const ContactDetail = lazy(() => import('../portal/contacts/ContactDetail'));
const ProfilePage = lazy(() => import('../portal/profile/ProfilePage'));
const CasesPage = lazy(() => import('../portal/cases/CasesPage'));
const CaseDetail = lazy(() => import('../portal/cases/CaseDetail'));
const HistoryPage = lazy(() => import('../portal/history/HistoryPage'));
const ConversationPage = lazy(() => import('../portal/history/ConversationPage'));
const AutomationsPage = lazy(() => import('../portal/automations/AutomationsPage'));
const ChatPage = lazy(() => import('../portal/chat/ChatPage'));

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

/** The CRM screens need sales or sre (the server's page guard and API say the same). */
function CrmOnly({ children }: { children: ReactNode }) {
  const me = useMe();
  if (!isCrm(me.roles)) return <Forbidden />;
  return <CrmLive>{children}</CrmLive>;
}

function CrmLive({ children }: { children: ReactNode }) {
  useCrmEvents();
  return <>{children}</>;
}

export const isCrm = (roles: string[]) => roles.includes('sales') || roles.includes('sre');

function Home() {
  const me = useMe();
  return <Navigate to={me.roles.includes('sre') ? '/admin' : me.roles.includes('sales') ? '/admin/crm' : '/portal'} replace />;
}

/** Inter comes from @fontsource (bundled, no CDN). */
const theme = createTheme({ fontFamily: 'Inter, system-ui, sans-serif', headings: { fontFamily: 'Inter, system-ui, sans-serif' } });

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
                <Route path="/admin/crm" element={<Navigate to="/admin/crm/leads" replace />} />
                <Route path="/admin/crm/leads" element={<CrmOnly><LeadsPage /></CrmOnly>} />
                <Route path="/admin/crm/leads/:id" element={<CrmOnly><LeadDetail /></CrmOnly>} />
                <Route path="/admin/crm/pipeline" element={<CrmOnly><PipelinePage /></CrmOnly>} />
                <Route path="/admin/crm/accounts" element={<CrmOnly><AccountsPage /></CrmOnly>} />
                <Route path="/admin/crm/accounts/:id" element={<CrmOnly><AccountDetail /></CrmOnly>} />
                <Route path="/admin/*" element={<SreOnly><NotFound /></SreOnly>} />
                <Route path="/portal" element={<PortalHome />} />
                <Route path="/portal/chat" element={<ChatPage />} />
                <Route path="/documents" element={<DocumentsPage />} />
                <Route path="/documents/:id" element={<DocumentDetail />} />
                <Route path="/contacts" element={<ContactsPage />} />
                <Route path="/contacts/:id" element={<ContactDetail />} />
                <Route path="/profile" element={<ProfilePage />} />
                <Route path="/cases" element={<CasesPage />} />
                <Route path="/cases/:id" element={<CaseDetail />} />
                <Route path="/history" element={<HistoryPage />} />
                <Route path="/history/:id" element={<ConversationPage />} />
                <Route path="/automations" element={<AutomationsPage />} />
                <Route path="*" element={<NotFound />} />
              </Routes>
            </Shell>
          </AuthProvider>
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  );
}
