/** One alert: labels, annotations, occurrences, its state history, whether it is silenced, and a silence like it. */
import { Alert, Anchor, Badge, Button, Card, Code, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { IconBellOff } from '@tabler/icons-react';
import { Link, useParams } from 'react-router';
import { $api, invalidatePaths } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { statusColor, when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';

/** The silences screen with its form open, one equality matcher per label of this alert. */
const silenceLink = (labels: Record<string, string>) => `/admin/silences?${new URLSearchParams([['new', '1'], ...Object.entries(labels).map(([k, v]) => ['m', `${k}=${v}`])])}`;

/** Annotations often carry a runbook or dashboard address: an SRE follows it with one click. */
const isWebAddress = (v: string) => /^https?:\/\/\S+$/.test(v);

function Pairs({ title, pairs }: { title: string; pairs: Record<string, string> }) {
  return (
    <Card withBorder>
      <Text fw={600} mb="xs">
        {title}
      </Text>
      {Object.keys(pairs).length === 0 ? (
        <Text c="dimmed">none</Text>
      ) : (
        <Table aria-label={title}>
          <Table.Tbody>
            {Object.entries(pairs).map(([k, v]) => (
              <Table.Tr key={k}>
                <Table.Td>
                  <Code>{k}</Code>
                </Table.Td>
                <Table.Td style={{ wordBreak: 'break-word' }}>
                  {isWebAddress(v) ? (
                    <Anchor href={v} target="_blank" rel="noreferrer">
                      {v}
                    </Anchor>
                  ) : (
                    v
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}

export default function AlertDetail() {
  const { id = '' } = useParams();
  const path = { params: { path: { id } } };
  const alert = $api.useQuery('get', '/api/v1/alerts/{id}', path);
  const history = $api.useQuery('get', '/api/v1/alerts/{id}/history', { params: { path: { id }, query: { limit: 200 } } });
  const ack = $api.useMutation('post', '/api/v1/alerts/{id}/acknowledge', { onSuccess: () => invalidatePaths('/api/v1/alerts') });
  const resolve = $api.useMutation('post', '/api/v1/alerts/{id}/resolve', { onSuccess: () => invalidatePaths('/api/v1/alerts') });
  if (alert.isPending) return <Loading />;
  if (!alert.data) return <ProblemAlert error={alert.error} />;
  const a = alert.data;
  return (
    <Stack gap="md">
      <BackLink to="/admin/alerts">Alerts</BackLink>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>{a.alertname}</Title>
          <Badge color={statusColor[a.status]}>{a.status}</Badge>
          {a.flapping && <Badge color="orange">flapping</Badge>}
          {a.silenced && (
            <Badge color="grape" variant="light" leftSection={<IconBellOff size={12} />}>
              silenced
            </Badge>
          )}
        </Group>
        <Group gap="sm">
          <Button component={Link} to={silenceLink(a.labels)} variant="light" color="grape" leftSection={<IconBellOff size={16} />}>
            Silence alerts like this
          </Button>
          {a.status === 'firing' && (
            <Button loading={ack.isPending} onClick={() => ack.mutate({ ...path, body: {} })}>
              Acknowledge
            </Button>
          )}
          {a.status !== 'resolved' && (
            <ConfirmButton color="green" question="Resolve this alert?" confirmLabel="Resolve" onConfirm={() => resolve.mutate({ ...path, body: {} })}>
              Resolve
            </ConfirmButton>
          )}
        </Group>
      </Group>
      <ProblemAlert error={ack.error ?? resolve.error} />
      <SimpleGrid cols={{ base: 1, sm: 4 }}>
        <Text>
          <b>Severity</b> {a.severity}
        </Text>
        <Text>
          <b>Source</b> {a.source.kind}/{a.source.name}
        </Text>
        <Text>
          <b>Occurrences</b> {a.occurrence_count}
        </Text>
        <Text>
          <b>First / last</b> {when(a.first_received_at)} / {when(a.last_received_at)}
        </Text>
      </SimpleGrid>
      {a.silenced && (
        <Alert color="grape" variant="light" icon={<IconBellOff size={18} />} title="Silenced">
          An active silence matches this alert: it is recorded, but opens no incident and runs no runbook while silenced.{' '}
          <Link to="/admin/silences">{a.silenced_by.length === 1 ? 'See the silence' : `See the ${a.silenced_by.length} silences`}</Link>
        </Alert>
      )}
      {a.incident_id && (
        <Text>
          Part of <Link to={`/admin/incidents/${a.incident_id}`}>an incident</Link>
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Pairs title="Labels" pairs={a.labels} />
        <Pairs title="Annotations" pairs={a.annotations} />
      </SimpleGrid>
      <Card withBorder>
        <Text fw={600} mb="xs">
          State history
        </Text>
        <Table aria-label="State history">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>From</Table.Th>
              <Table.Th>To</Table.Th>
              <Table.Th>By</Table.Th>
              <Table.Th>Note</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(history.data?.items ?? []).map((h) => (
              <Table.Tr key={h.id}>
                <Table.Td>{when(h.at)}</Table.Td>
                <Table.Td>{h.from ?? '—'}</Table.Td>
                <Table.Td>{h.to}</Table.Td>
                <Table.Td>{h.by}</Table.Td>
                <Table.Td>{h.note ?? ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
    </Stack>
  );
}
