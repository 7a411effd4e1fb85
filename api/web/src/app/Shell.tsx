/** The frame of every page: header (who, role, sign-out, links), navigation, and the page. */
import { ActionIcon, AppShell, Anchor, Badge, Burger, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconActivityHeartbeat, IconAlertTriangle, IconBellOff, IconBook, IconFlame, IconLogout, IconNetwork, IconRadar, IconListDetails } from '@tabler/icons-react';
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
        {isSre &&
          adminNav.map((item) => (
            <NavLink
              key={item.to}
              component={RouterLink}
              to={item.to}
              label={item.label}
              leftSection={<item.icon size={18} />}
              active={pathname.startsWith(item.to)}
              onClick={close}
            />
          ))}
        <NavLink component={RouterLink} to="/portal" label="Portal" leftSection={<IconListDetails size={18} />} active={pathname === '/portal'} onClick={close} />
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
