/** My conversations, from the agent API: channel, when it started, how many messages, and the summary. */
import { Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { Link } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { when } from '../../shared/format';
import { ListBody, useNarrow } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Channel } from '../channel';
import { ConnectionState } from './connection';

type Row = Schemas['HistoryRow'];
const summaryOf = (s: Row) => s.summary ?? (s.status === 'closed' ? 'no summary' : 'in progress — summarised when it goes idle');

function Sessions({ sessions }: { sessions: Row[] }) {
  const narrow = useNarrow();
  if (narrow) {
    return (
      <Stack gap="xs" role="list" aria-label="Conversations">
        {sessions.map((s) => (
          <Card key={s.session_id} withBorder padding="sm" role="listitem">
            <Group justify="space-between" wrap="nowrap">
              <Channel channel={s.channel} />
              <Text size="xs" c="dimmed">
                {s.message_count} message{s.message_count === 1 ? '' : 's'}
              </Text>
            </Group>
            <Link to={`/history/${s.session_id}`}>{when(s.created_at)}</Link>
            <Text size="sm" c={s.summary ? undefined : 'dimmed'} lineClamp={3}>
              {summaryOf(s)}
            </Text>
          </Card>
        ))}
      </Stack>
    );
  }
  return (
    <Table.ScrollContainer minWidth={640}>
      <Table striped highlightOnHover aria-label="Conversations">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Channel</Table.Th>
            <Table.Th>Started</Table.Th>
            <Table.Th>Messages</Table.Th>
            <Table.Th>Summary</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {sessions.map((s) => (
            <Table.Tr key={s.session_id}>
              <Table.Td>
                <Channel channel={s.channel} />
              </Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }}>
                <Link to={`/history/${s.session_id}`}>{when(s.created_at)}</Link>
              </Table.Td>
              <Table.Td>{s.message_count}</Table.Td>
              <Table.Td>
                <Text size="sm" lineClamp={2} c={s.summary ? undefined : 'dimmed'}>
                  {summaryOf(s)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export default function HistoryPage() {
  const history = $api.useQuery('get', '/api/portal/history');
  const sessions = history.data?.sessions ?? [];
  const failed = history.data && history.data.connection.state !== 'connected';
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Conversation history</Title>
        <Button variant="default" size="xs" leftSection={<IconRefresh size={14} />} loading={history.isFetching} onClick={() => void history.refetch()}>
          Refresh
        </Button>
      </Group>
      <Text c="dimmed" size="sm">
        Your conversations with the assistant on every channel, newest first.
      </Text>
      {history.data && <ConnectionState service="agent API" connection={history.data.connection} />}
      <ProblemAlert error={history.error} />
      {!failed && (
        <ListBody pending={history.isPending} count={sessions.length} empty={<>No conversations yet. <Link to="/portal/chat">Start one in the chat.</Link></>}>
          <Sessions sessions={sessions} />
        </ListBody>
      )}
    </Stack>
  );
}
