/** One entity: attributes, relationships both ways, the neighbourhood graph, monitors and recommendations; a manual one is edited and deleted here. */
import { Alert, Anchor, Badge, Button, Card, Code, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { IconLock } from '@tabler/icons-react';
import { useState } from 'react';
import { notifications } from '@mantine/notifications';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { $api, invalidatePaths } from '../../api/client';
import { statusColor, when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { ConfirmButton } from '../../shared/confirm';
import { NeighbourhoodGraph } from './NeighbourhoodGraph';
import { EntityForm } from './EntityForm';
import { MonitorsTable } from './monitors';
import { Relationships } from './Relationships';

export default function EntityDetail() {
  const { id = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const depth = Math.min(5, Math.max(1, Number(params.get('depth') ?? 1) || 1));
  const entity = $api.useQuery('get', '/api/v1/cmdb/entities/{id}', { params: { path: { id } } });
  const hood = $api.useQuery('get', '/api/v1/cmdb/entities/{id}/neighbourhood', { params: { path: { id }, query: { depth } } });
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const refresh = () => invalidatePaths('/api/v1/cmdb');
  const remove = $api.useMutation('delete', '/api/v1/cmdb/entities/{id}', {
    onSuccess: async () => {
      notifications.show({ message: `Entity ${entity.data?.name ?? ''} deleted` });
      await navigate('/admin/cmdb', { replace: true });
      await refresh();
    },
  });
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
      <Group justify="space-between" align="start">
        <Group gap="sm">
          <Title order={2}>{e.name}</Title>
          <Badge variant="outline">{e.type}</Badge>
          <Badge color={statusColor[e.health]}>{e.health}</Badge>
          <Badge variant="light" color={e.origin === 'manual' ? 'blue' : 'gray'}>
            {e.origin}
          </Badge>
          {e.stale && <Badge color="gray">stale since {when(e.stale_since)}</Badge>}
        </Group>
        {e.origin === 'manual' && (
          <Group gap="sm">
            <Button variant="light" onClick={() => setEditing(true)}>
              Edit
            </Button>
            <ConfirmButton
              variant="light"
              question={`Delete ${e.name}? Its relationships, recommendations and monitors go with it (a deployed monitor leaves the rule file at the next deploy).`}
              confirmLabel="Delete"
              loading={remove.isPending}
              onConfirm={() => remove.mutate({ params: { path: { id } } })}
            >
              Delete
            </ConfirmButton>
          </Group>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        {e.source} · <Code>{e.natural_key}</Code> · first seen {when(e.first_seen_at)} · last seen {when(e.last_seen_at)}
      </Text>
      {e.origin === 'discovery' && (
        <Alert variant="light" color="gray" icon={<IconLock size={18} />} title="Discovered entity: read-only here">
          The source {e.source} reports it: its name, health and attributes follow that source at each discovery run, so they cannot be edited or deleted by hand. Relationships of your own can
          still be added.
        </Alert>
      )}
      <ProblemAlert error={remove.error} />
      {editing && <EntityForm entity={e} onClose={() => setEditing(false)} />}
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
          <Relationships entity={e} />
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
        <Group justify="space-between" mb="xs">
          <Text fw={600}>Monitors</Text>
          <Anchor component={Link} to="/admin/monitors" size="sm">
            All monitors
          </Anchor>
        </Group>
        {e.monitors.length ? <MonitorsTable monitors={e.monitors} /> : <Text c="dimmed">none</Text>}
      </Card>
    </Stack>
  );
}
