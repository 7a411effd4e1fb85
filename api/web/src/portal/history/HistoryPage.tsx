/** My conversations, from the agent API: channel, when it started, how many messages, and the summary. */
import { Button, Group, Stack, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { Link } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { ProblemAlert } from '../../shared/problem';
import { Channel } from '../channel';
import { ConnectionState } from './connection';

type Row = Schemas['HistoryRow'];
const summaryOf = (s: Row) => s.summary ?? (s.status === 'closed' ? 'no summary' : 'in progress — summarised when it goes idle');

function Sessions({ sessions, pending }: { sessions: Row[]; pending: boolean }) {
  return (
    <DataTable
      label="Conversations"
      pending={pending}
      empty={
        <>
          No conversations yet. <Link to="/portal/chat">Start one in the chat.</Link>
        </>
      }
      rows={sessions}
      rowKey={(s) => s.session_id}
      minWidth={640}
      columns={[
        { header: 'Channel', cell: (s) => <Channel channel={s.channel} /> },
        { header: 'Started', cell: (s) => <Link to={`/history/${s.session_id}`}>{when(s.created_at)}</Link>, nowrap: true },
        { header: 'Messages', cell: (s) => s.message_count },
        {
          header: 'Summary',
          cell: (s) => (
            <Text size="sm" lineClamp={2} c={s.summary ? undefined : 'dimmed'}>
              {summaryOf(s)}
            </Text>
          ),
        },
      ]}
      card={(s) => (
        <>
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
        </>
      )}
    />
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
      {!failed && <Sessions sessions={sessions} pending={history.isPending} />}
    </Stack>
  );
}
