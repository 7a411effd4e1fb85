/** Runbooks manager: the list (search in the URL), create, and every runbook's executions. */
import { Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { MatcherBadges } from '../../shared/matchers';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { Loading } from '../../shared/states';
import { opt, useUrlState } from '../../shared/url-state';
import { ExecutionsTable } from './Executions';
import { RunbookForm } from './RunbookForm';

const pageSize = 25;

export default function RunbooksPage() {
  const { values: f, set, page, setPage } = useUrlState(['search'] as const);
  const [opened, { open, close }] = useDisclosure(false);
  const runbooks = $api.useQuery('get', '/api/v1/runbooks', { params: { query: { limit: pageSize, offset: (page - 1) * pageSize, search: opt(f.search) } } });
  const executions = $api.useQuery('get', '/api/v1/runbooks/executions', { params: { query: { limit: 20 } } }, { refetchInterval: 10_000 });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Runbooks</Title>
        <Button onClick={open}>New runbook</Button>
      </Group>
      {opened && <RunbookForm opened={opened} onClose={close} />}
      <DataTable
        label="Runbooks"
        filters={<SearchInput placeholder="name or description" value={f.search} onSearch={(search) => set({ search })} w={300} />}
        error={runbooks.error}
        pending={runbooks.isPending}
        empty="No runbooks yet."
        rows={runbooks.data?.items ?? []}
        rowKey={(r) => r.id}
        columns={[
          { header: 'Name', cell: (r) => <Link to={`/admin/runbooks/${r.id}`}>{r.name}</Link> },
          { header: 'Matchers', cell: (r) => <MatcherBadges matchers={r.matchers} /> },
          { header: 'Mode', cell: (r) => (r.auto_trigger ? 'automatic' : 'manual') },
          { header: 'Enabled', cell: (r) => (r.enabled ? 'yes' : 'no') },
        ]}
        paging={runbooks.data && { total: runbooks.data.total, pageSize, page, onPage: setPage }}
      />
      <Card withBorder>
        <Text fw={600} mb="xs">
          Recent executions
        </Text>
        {executions.data ? <ExecutionsTable items={executions.data.items} showRunbook /> : <Loading />}
      </Card>
    </Stack>
  );
}
