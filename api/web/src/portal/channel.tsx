/** The channel a conversation or message came from, as an icon and its name (history and chat). */
import { Group, Text, Tooltip } from '@mantine/core';
import { IconBrandApple, IconBrandSlack, IconBrandWhatsapp, IconDeviceMobileMessage, IconMail, IconMessageCircle, IconPhone, IconWorld, type Icon } from '@tabler/icons-react';

/** Every channel the session service names (the web chat's is `chat`; the messaging app's `chatapp`) and Siri have their own icon; any other name the generic one. */
const icons: Record<string, Icon> = {
  slack: IconBrandSlack, voice: IconPhone, web: IconWorld, chat: IconWorld, siri: IconBrandApple, sms: IconDeviceMobileMessage, email: IconMail, chatapp: IconBrandWhatsapp,
};
const labels: Record<string, string> = { slack: 'Slack', voice: 'Voice', web: 'Web', chat: 'Web chat', siri: 'Siri', sms: 'SMS', email: 'Email', chatapp: 'Messaging app' };

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
