/** Recent workflow executions from the automation API, with its connection state (and the error when it fails). */
import { Button, Group, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { $api, type Schemas } from '../../api/client';
import { duration, when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { ProblemAlert } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';
import { useUrlState } from '../../shared/url-state';
import { ConnectionState } from '../history/connection';

const statuses = ['success', 'failed', 'running'] as const;

type Execution = Schemas['AutomationExecution'];
const stopped = (e: Execution) => (e.status === 'running' ? <Text span size="sm" c="dimmed">running…</Text> : when(e.stoppedAt));

function Executions({ executions, pending, empty }: { executions: Execution[]; pending: boolean; empty: string }) {
  return (
    <DataTable
      label="Executions"
      pending={pending}
      empty={empty}
      rows={executions}
      rowKey={(e) => e.id}
      minWidth={620}
      columns={[
        { header: 'Workflow', cell: (e) => e.workflowName },
        { header: 'Status', cell: (e) => <StatusBadge status={e.status} /> },
        { header: 'Started', cell: (e) => when(e.startedAt) },
        { header: 'Stopped', cell: stopped },
        { header: 'Took', cell: (e) => duration(e.startedAt, e.stoppedAt) },
      ]}
      card={(e) => (
        <>
          <Group justify="space-between" wrap="nowrap">
            <Text fw={600} size="sm">
              {e.workflowName}
            </Text>
            <StatusBadge status={e.status} />
          </Group>
          <Text size="xs" c="dimmed">
            {when(e.startedAt)} → {stopped(e)} · {duration(e.startedAt, e.stoppedAt)}
          </Text>
        </>
      )}
    />
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
          <Executions executions={shown} pending={automations.isPending} empty={f.status ? `No ${f.status} executions among the latest.` : 'No executions yet.'} />
        </>
      )}
    </Stack>
  );
}
