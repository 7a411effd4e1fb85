/** The connection state of a service the portal reads from (agent API, automation API), with the error when it failed. */
import { Alert, Group, Text } from '@mantine/core';
import { IconPlugConnected, IconPlugConnectedX } from '@tabler/icons-react';
import type { Schemas } from '../../api/client';
import { StatusBadge } from '../../shared/status-badge';

const stateLabel = { connected: 'connected', failed: 'connection failed', not_configured: 'not configured' } as const;

export function ConnectionState({ service, connection }: { service: string; connection: Schemas['PortalConnection'] }) {
  if (connection.state === 'connected') {
    return (
      <Group gap={6} aria-label={`${service} connection`}>
        <IconPlugConnected size={16} color="var(--mantine-color-green-7)" />
        <Text size="sm" c="dimmed">
          {service}
        </Text>
        <StatusBadge status="connected">{stateLabel.connected}</StatusBadge>
      </Group>
    );
  }
  return (
    <Alert
      color={connection.state === 'failed' ? 'red' : 'gray'}
      icon={<IconPlugConnectedX size={18} />}
      title={connection.state === 'failed' ? `Cannot reach the ${service}` : `The ${service} is not configured`}
      role="alert"
      aria-label={`${service} connection`}
    >
      <Text size="sm">{connection.error ?? 'No details were given.'}</Text>
    </Alert>
  );
}
