/** Runbooks manager: the list (search in the URL), create, and every runbook's executions. */
import { Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { MatcherBadges } from '../../shared/matchers';
import { Pager } from '../../shared/pager';
import { ListBody, SearchInput } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
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
  const items = runbooks.data?.items ?? [];
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Runbooks</Title>
        <Button onClick={open}>New runbook</Button>
      </Group>
      {opened && <RunbookForm opened={opened} onClose={close} />}
      <SearchInput placeholder="name or description" value={f.search} onSearch={(search) => set({ search })} w={300} />
      <ProblemAlert error={runbooks.error} />
      <ListBody pending={runbooks.isPending} count={items.length} empty="No runbooks yet.">
        <Table.ScrollContainer minWidth={700}>
          <Table striped highlightOnHover aria-label="Runbooks">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Matchers</Table.Th>
                <Table.Th>Mode</Table.Th>
                <Table.Th>Enabled</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>
                    <Link to={`/admin/runbooks/${r.id}`}>{r.name}</Link>
                  </Table.Td>
                  <Table.Td>
                    <MatcherBadges matchers={r.matchers} />
                  </Table.Td>
                  <Table.Td>{r.auto_trigger ? 'automatic' : 'manual'}</Table.Td>
                  <Table.Td>{r.enabled ? 'yes' : 'no'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </ListBody>
      {runbooks.data && <Pager total={runbooks.data.total} pageSize={pageSize} page={page} onPage={setPage} />}
      <Card withBorder>
        <Text fw={600} mb="xs">
          Recent executions
        </Text>
        {executions.data ? <ExecutionsTable items={executions.data.items} showRunbook /> : <Loading />}
      </Card>
    </Stack>
  );
}
