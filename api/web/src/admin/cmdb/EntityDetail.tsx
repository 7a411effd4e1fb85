/** One entity: attributes, relationships both ways, the neighbourhood graph, monitors and recommendations. */
import { Badge, Button, Card, Code, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { Link, useParams, useSearchParams } from 'react-router';
import { $api, invalidatePaths } from '../../api/client';
import { statusColor, when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { ConfirmButton } from '../../shared/confirm';
import { NeighbourhoodGraph } from './NeighbourhoodGraph';

export default function EntityDetail() {
  const { id = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const depth = Math.min(5, Math.max(1, Number(params.get('depth') ?? 1) || 1));
  const entity = $api.useQuery('get', '/api/v1/cmdb/entities/{id}', { params: { path: { id } } });
  const hood = $api.useQuery('get', '/api/v1/cmdb/entities/{id}/neighbourhood', { params: { path: { id }, query: { depth } } });
  const refresh = () => invalidatePaths('/api/v1/cmdb');
  const apply = $api.useMutation('post', '/api/v1/cmdb/recommendations/{id}/apply', { onSuccess: refresh });
  const dismiss = $api.useMutation('post', '/api/v1/cmdb/recommendations/{id}/dismiss', { onSuccess: refresh });
  const propose = $api.useMutation('post', '/api/v1/cmdb/entities/{id}/recommendations/propose', {
    onSuccess: async (r) => {
      notifications.show({ message: `${r.stored.length} proposal(s) stored, ${r.rejected.length} rejected` });
      await refresh();
    },
  });
  if (entity.isPending) return <Loading />;
  if (!entity.data) return <ProblemAlert error={entity.error} />;
  const e = entity.data;
  return (
    <Stack gap="md">
      <BackLink to="/admin/cmdb">CMDB</BackLink>
      <Group gap="sm">
        <Title order={2}>{e.name}</Title>
        <Badge variant="outline">{e.type}</Badge>
        <Badge color={statusColor[e.health]}>{e.health}</Badge>
        {e.stale && <Badge color="gray">stale since {when(e.stale_since)}</Badge>}
      </Group>
      <Text size="sm" c="dimmed">
        {e.source} · <Code>{e.natural_key}</Code> · first seen {when(e.first_seen_at)} · last seen {when(e.last_seen_at)}
      </Text>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Text fw={600} mb="xs">
            Attributes
          </Text>
          <Code block style={{ maxHeight: 260, overflow: 'auto' }}>
            {JSON.stringify(e.attributes, null, 2)}
          </Code>
        </Card>
        <Card withBorder>
          <Text fw={600} mb="xs">
            Relationships
          </Text>
          <Table aria-label="Relationships">
            <Table.Tbody>
              {e.relationships.map((r) => (
                <Table.Tr key={r.id + r.direction}>
                  <Table.Td>{r.direction === 'outgoing' ? `→ ${r.type}` : `← ${r.type}`}</Table.Td>
                  <Table.Td>
                    <Link to={`/admin/cmdb/${r.entity_id}`}>{r.entity_name}</Link> <Text span size="xs" c="dimmed">({r.entity_type})</Text>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge size="xs" status={r.entity_health} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {!e.relationships.length && <Text c="dimmed">none</Text>}
        </Card>
      </SimpleGrid>
      <Card withBorder>
        <Group justify="space-between" mb="xs">
          <Text fw={600}>Neighbourhood</Text>
          <Group gap="xs">
            <Text size="sm" id="depth-label">
              Depth
            </Text>
            <SegmentedControl aria-labelledby="depth-label" size="xs" data={['1', '2', '3', '4', '5']} value={String(depth)} onChange={(d) => setParams({ depth: d }, { replace: true })} />
          </Group>
        </Group>
        {hood.data ? <NeighbourhoodGraph data={hood.data} /> : <Loading />}
      </Card>
      <Card withBorder>
        <Group justify="space-between" mb="xs">
          <Text fw={600}>Recommendations</Text>
          <Button size="xs" variant="light" loading={propose.isPending} onClick={() => propose.mutate({ params: { path: { id } } })}>
            Propose with model
          </Button>
        </Group>
        <ProblemAlert error={propose.error ?? apply.error ?? dismiss.error} />
        <Table.ScrollContainer minWidth={600}>
          <Table aria-label="Recommendations">
            <Table.Tbody>
              {e.recommendations.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>
                    <b>{r.alert}</b>
                    <Text size="xs" c="dimmed">
                      {r.rationale}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Code>{r.rule.expr}</Code>
                  </Table.Td>
                  <Table.Td>{r.origin}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={r.status} />
                  </Table.Td>
                  <Table.Td>
                    {r.status === 'proposed' && (
                      <Group gap={4} wrap="nowrap">
                        <Button size="compact-xs" onClick={() => apply.mutate({ params: { path: { id: r.id } } })}>
                          Apply
                        </Button>
                        <ConfirmButton size="compact-xs" variant="subtle" question={`Dismiss "${r.alert}"?`} confirmLabel="Dismiss" onConfirm={() => dismiss.mutate({ params: { path: { id: r.id } } })}>
                          Dismiss
                        </ConfirmButton>
                      </Group>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {!e.recommendations.length && <Text c="dimmed">none</Text>}
      </Card>
      <Card withBorder>
        <Text fw={600} mb="xs">
          Monitors
        </Text>
        <Table aria-label="Monitors">
          <Table.Tbody>
            {e.monitors.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{m.alert}</Table.Td>
                <Table.Td>
                  <StatusBadge status={m.status} />
                </Table.Td>
                <Table.Td>{m.deployed_at ? `deployed ${when(m.deployed_at)}` : ''}</Table.Td>
                <Table.Td c="red">{m.last_error ?? ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {!e.monitors.length && <Text c="dimmed">none</Text>}
      </Card>
    </Stack>
  );
}
