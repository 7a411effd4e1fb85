/** One chat message with its role, content and source channel (spec 000 § web consumer); the person's own on the right. */
import { Group, Paper, Text } from '@mantine/core';
import { ChannelIcon, channelLabel } from '../channel';

export function MessageBubble({ role, content, channel, pending = false }: { role: string; content: string; channel: string | null | undefined; pending?: boolean }) {
  const mine = role === 'user';
  return (
    <Group justify={mine ? 'flex-end' : 'flex-start'} role="listitem" data-role={role} data-channel={channel ?? ''}>
      <Paper
        withBorder
        p="xs"
        radius="md"
        maw={{ base: '92%', sm: '75%' }}
        bg={mine ? 'var(--mantine-color-blue-light)' : undefined}
        style={{ opacity: pending ? 0.6 : 1 }}
      >
        <Group gap={6} mb={2} wrap="nowrap">
          <ChannelIcon channel={channel} size={14} />
          <Text size="xs" fw={600}>
            {mine ? 'You' : role === 'assistant' ? 'Assistant' : role}
          </Text>
          <Text size="xs" c="dimmed">
            via {channelLabel(channel)}
            {pending ? ' · sending…' : ''}
          </Text>
        </Group>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {content}
        </Text>
      </Paper>
    </Group>
  );
}
