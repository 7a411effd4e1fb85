/** The frame of every page: header (who, role, sign-out, links), navigation, and the page. */
import { ActionIcon, AppShell, Anchor, Badge, Burger, Button, Divider, Group, NavLink, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import {
  IconActivityHeartbeat, IconAddressBook, IconBuilding, IconLayoutKanban, IconUserPlus, IconAlertTriangle, IconBellOff, IconBook, IconFiles, IconFlame, IconHistory, IconHome, IconLifebuoy, IconLogout, IconMessages, IconNetwork, IconRadar, IconRobot,
  IconUserCircle,
} from '@tabler/icons-react';
import { Suspense, type ReactNode } from 'react';
import { NavLink as RouterLink, useLocation } from 'react-router';
import { mainRole, signOut, useMe } from '../shared/auth';
import { Loading } from '../shared/states';

const adminNav = [
  { to: '/admin/alerts', label: 'Alerts', icon: IconAlertTriangle },
  { to: '/admin/silences', label: 'Silences', icon: IconBellOff },
  { to: '/admin/incidents', label: 'Incidents', icon: IconFlame },
  { to: '/admin/cmdb', label: 'CMDB', icon: IconNetwork },
  { to: '/admin/monitors', label: 'Monitors', icon: IconActivityHeartbeat },
  { to: '/admin/discovery', label: 'Discovery', icon: IconRadar },
  { to: '/admin/runbooks', label: 'Runbooks', icon: IconBook },
];

/** The CRM, for sales and the operators. */
const crmNav = [
  { to: '/admin/crm/leads', label: 'Leads', icon: IconUserPlus },
  { to: '/admin/crm/pipeline', label: 'Pipeline', icon: IconLayoutKanban },
  { to: '/admin/crm/accounts', label: 'Accounts', icon: IconBuilding },
];

/** The self-service portal (spec 002 § Portal routes), for every signed-in person. */
const portalNav = [
  { to: '/portal', label: 'Portal home', icon: IconHome },
  { to: '/portal/chat', label: 'Chat', icon: IconMessages },
  { to: '/contacts', label: 'Contacts', icon: IconAddressBook },
  { to: '/documents', label: 'Documents', icon: IconFiles },
  { to: '/cases', label: 'Cases', icon: IconLifebuoy },
  { to: '/history', label: 'History', icon: IconHistory },
  { to: '/automations', label: 'Automations', icon: IconRobot },
  { to: '/profile', label: 'Profile', icon: IconUserCircle },
];

/** A section is active on its page and below it (/documents/…); the portal home only on itself, its chat has its own entry. (`end` stops the router's own prefix match from marking /portal on /portal/chat.) */
const isActive = (pathname: string, to: string) => pathname === to || (to !== '/portal' && pathname.startsWith(`${to}/`));

type NavItem = (typeof adminNav)[number];

function NavItems({ items, active, onClick }: { items: NavItem[]; active: (to: string) => boolean; onClick: () => void }) {
  return items.map((item) => (
    <NavLink key={item.to} component={RouterLink} to={item.to} label={item.label} leftSection={<item.icon size={18} />} active={active(item.to)} end onClick={onClick} />
  ));
}

/** The operators' other tools: the queue dashboard and the API reference. */
function ToolLinks() {
  return (
    <>
      <Anchor href="/admin/queues" size="sm">
        Queues
      </Anchor>
      <Anchor href="/api/docs" size="sm">
        API reference
      </Anchor>
    </>
  );
}

/** The signed-in name and role (header on wide screens, navigation on narrow ones). */
function Who() {
  const me = useMe();
  return (
    <>
      <Text size="sm" fw={600} truncate maw={180}>
        {me.name}
      </Text>
      <Badge variant="light" aria-label="Role" style={{ minWidth: 'max-content' }}>
        {mainRole(me)}
      </Badge>
    </>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const me = useMe();
  const [opened, { toggle, close }] = useDisclosure(false);
  const { pathname } = useLocation();
  const isSre = me.roles.includes('sre');
  const isCrm = isSre || me.roles.includes('sales');
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 210, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={4}>switchboard</Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            {isSre && (
              <Group gap="sm" visibleFrom="sm">
                <ToolLinks />
              </Group>
            )}
            <Group gap="sm" wrap="nowrap" visibleFrom="sm">
              <Who />
            </Group>
            <Button variant="subtle" size="xs" leftSection={<IconLogout size={16} />} onClick={() => void signOut()} visibleFrom="sm">
              Sign out
            </Button>
            <ActionIcon variant="subtle" aria-label="Sign out" onClick={() => void signOut()} hiddenFrom="sm">
              <IconLogout size={18} />
            </ActionIcon>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        {isSre && (
          <>
            <NavItems items={adminNav} active={(to) => pathname.startsWith(to)} onClick={close} />
          </>
        )}
        {isCrm && (
          <>
            <Divider my="xs" label="CRM" labelPosition="left" />
            <NavItems items={crmNav} active={(to) => pathname.startsWith(to)} onClick={close} />
          </>
        )}
        {(isSre || isCrm) && <Divider my="xs" label="Portal" labelPosition="left" />}
        <NavItems items={portalNav} active={(to) => isActive(pathname, to)} onClick={close} />
        <Group gap="sm" hiddenFrom="sm" p="sm" wrap="nowrap">
          <Who />
        </Group>
        {isSre && (
          <Group gap="sm" hiddenFrom="sm" p="sm">
            <ToolLinks />
          </Group>
        )}
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense fallback={<Loading />}>{children}</Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
