/** One conversation from the agent API: its fields and every message with role and channel. */
import { Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useParams } from 'react-router';
import { $api, isProblem } from '../../api/client';
import { when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Empty, Loading } from '../../shared/states';
import { StatusBadge } from '../../shared/status-badge';
import { Channel } from '../channel';
import { isNotFound, RecordNotFound } from '../not-found';
import { MessageBubble } from '../chat/MessageBubble';

export default function ConversationPage() {
  const { id = '' } = useParams();
  const one = $api.useQuery('get', '/api/portal/history/{session_id}', { params: { path: { session_id: id } } });
  if (one.isPending) return <Loading />;
  if (isNotFound(one.error) || (isProblem(one.error) && one.error.status === 400)) return <RecordNotFound what="Conversation" back="/history" backLabel="History" />;
  if (!one.data)
    return (
      <Stack>
        <BackLink to="/history">History</BackLink>
        <ProblemAlert error={one.error} />
      </Stack>
    );
  const s = one.data;
  return (
    <Stack gap="md">
      <BackLink to="/history">History</BackLink>
      <Group gap="sm">
        <Title order={2}>Conversation of {when(s.created_at)}</Title>
        <StatusBadge status={s.status} />
      </Group>
      <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="xs">
        <Group gap={6}>
          <Text size="sm" fw={700}>
            Channel
          </Text>
          <Channel channel={s.channel} />
        </Group>
        <Text size="sm">
          <b>Messages</b> {s.message_count}
        </Text>
        <Text size="sm">
          <b>Started</b> {when(s.created_at)}
        </Text>
      </SimpleGrid>
      {s.summary && (
        <Card withBorder>
          <Text size="sm" fw={600}>
            Summary
          </Text>
          <Text size="sm">{s.summary}</Text>
        </Card>
      )}
      <Stack gap="xs" role="list" aria-label="Messages">
        {s.messages.length === 0 && <Empty>No messages in this conversation.</Empty>}
        {s.messages.map((m, i) => (
          <MessageBubble key={i} role={m.role} content={m.content} channel={m.channel ?? s.channel} />
        ))}
      </Stack>
    </Stack>
  );
}
