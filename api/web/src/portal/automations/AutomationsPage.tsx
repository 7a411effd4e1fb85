/** Recent workflow executions from the automation API, with its connection state (and the error when it fails). */
import { Button, Card, Group, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { $api, type Schemas } from '../../api/client';
import { duration, when } from '../../shared/format';
import { ListBody, useNarrow } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';
import { useUrlState } from '../../shared/url-state';
import { ConnectionState } from '../history/connection';

const statuses = ['success', 'failed', 'running'] as const;

type Execution = Schemas['AutomationExecution'];
const stopped = (e: Execution) => (e.status === 'running' ? <Text span size="sm" c="dimmed">running…</Text> : when(e.stoppedAt));

function Executions({ executions }: { executions: Execution[] }) {
  if (useNarrow()) {
    return (
      <Stack gap="xs" role="list" aria-label="Executions">
        {executions.map((e) => (
          <Card key={e.id} withBorder padding="sm" role="listitem">
            <Group justify="space-between" wrap="nowrap">
              <Text fw={600} size="sm">
                {e.workflowName}
              </Text>
              <StatusBadge status={e.status} />
            </Group>
            <Text size="xs" c="dimmed">
              {when(e.startedAt)} → {stopped(e)} · {duration(e.startedAt, e.stoppedAt)}
            </Text>
          </Card>
        ))}
      </Stack>
    );
  }
  return (
    <Table.ScrollContainer minWidth={620}>
      <Table striped highlightOnHover aria-label="Executions">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Workflow</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Started</Table.Th>
            <Table.Th>Stopped</Table.Th>
            <Table.Th>Took</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {executions.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td>{e.workflowName}</Table.Td>
              <Table.Td>
                <StatusBadge status={e.status} />
              </Table.Td>
              <Table.Td>{when(e.startedAt)}</Table.Td>
              <Table.Td>{stopped(e)}</Table.Td>
              <Table.Td>{duration(e.startedAt, e.stoppedAt)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export default function AutomationsPage() {
  const { values: f, set } = useUrlState(['status'] as const);
  const automations = $api.useQuery('get', '/api/portal/automations', {}, { refetchInterval: 30_000 });
  const all = automations.data?.executions ?? [];
  const shown = f.status ? all.filter((e) => e.status === f.status) : all;
  const connected = automations.data?.connection.state === 'connected';
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Automations</Title>
        <Button variant="default" size="xs" leftSection={<IconRefresh size={14} />} loading={automations.isFetching} onClick={() => void automations.refetch()}>
          Refresh
        </Button>
      </Group>
      <Text c="dimmed" size="sm">
        The latest workflow executions of the automation system.
      </Text>
      {automations.data && <ConnectionState service="automation API" connection={automations.data.connection} />}
      <ProblemAlert error={automations.error} />
      {(automations.isPending || connected) && (
        <>
          <SegmentedControl
            aria-label="Status"
            w="fit-content"
            data={[{ value: '', label: 'All' }, ...statuses.map((s) => ({ value: s, label: s }))]}
            value={f.status}
            onChange={(v) => set({ status: v })}
          />
          <ListBody pending={automations.isPending} count={shown.length} empty={f.status ? `No ${f.status} executions among the latest.` : 'No executions yet.'}>
            <Executions executions={shown} />
          </ListBody>
        </>
      )}
    </Stack>
  );
}
