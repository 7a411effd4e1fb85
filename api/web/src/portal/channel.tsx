/** The channel a conversation or message came from, as an icon and its name (history and chat). */
import { Group, Text, Tooltip } from '@mantine/core';
import { IconBrandApple, IconBrandSlack, IconMessageCircle, IconPhone, IconWorld, type Icon } from '@tabler/icons-react';

/** Slack, Voice, Web (the web chat's channel is `chat`) and Siri have their own icon; any other name the generic one. */
const icons: Record<string, Icon> = { slack: IconBrandSlack, voice: IconPhone, web: IconWorld, chat: IconWorld, siri: IconBrandApple };
const labels: Record<string, string> = { slack: 'Slack', voice: 'Voice', web: 'Web', chat: 'Web chat', siri: 'Siri' };

export const channelLabel = (channel: string | null | undefined) => (channel ? (labels[channel] ?? channel) : 'unknown');

export function ChannelIcon({ channel, size = 18 }: { channel: string | null | undefined; size?: number }) {
  const Glyph = (channel && icons[channel]) || IconMessageCircle;
  return (
    <Tooltip label={channelLabel(channel)}>
      <Glyph size={size} aria-label={`Channel ${channelLabel(channel)}`} role="img" />
    </Tooltip>
  );
}

export function Channel({ channel }: { channel: string | null | undefined }) {
  return (
    <Group gap={6} wrap="nowrap">
      <ChannelIcon channel={channel} />
      <Text size="sm">{channelLabel(channel)}</Text>
    </Group>
  );
}
