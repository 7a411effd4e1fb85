/**
 * My profile: email, display name and roles as the identity provider gave them (read-only);
 * timezone, phone and notification preferences editable, each refusal beside its field.
 */
import { Autocomplete, Badge, Button, Card, Checkbox, Group, SimpleGrid, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { $api, fetchClient, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { Field } from '../parts';

type Profile = Schemas['Profile'];
type Channel = keyof Schemas['NotificationPreferences']['channels'];

const channels: Array<{ key: Channel; label: string }> = [
  { key: 'email', label: 'Email' },
  { key: 'sms', label: 'SMS' },
  { key: 'chatapp', label: 'Messaging app' },
  { key: 'push', label: 'Push' },
];

/** Every IANA zone this browser knows (the server checks the name too: a typed-in one may be refused). */
const timezones = (() => {
  const zones = Intl.supportedValuesOf('timeZone');
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
})();

function ProfileForm({ profile }: { profile: Profile }) {
  const [timezone, setTimezone] = useState(profile.timezone);
  const [phone, setPhone] = useState(profile.phone ?? '');
  const [channelOn, setChannelOn] = useState<Record<Channel, boolean>>(
    () => Object.fromEntries(channels.map(({ key }) => [key, profile.notification_preferences.channels[key] ?? true])) as Record<Channel, boolean>,
  );
  const quiet = profile.notification_preferences.quiet_hours;
  const [quietOn, setQuietOn] = useState(quiet?.enabled ?? false);
  const [quietStart, setQuietStart] = useState(quiet?.start ?? '22:00');
  const [quietEnd, setQuietEnd] = useState(quiet?.end ?? '07:00');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fieldError = useFieldErrors(error);

  async function save() {
    setBusy(true);
    setError(null);
    const { error: failed } = await fetchClient.PATCH('/api/portal/profile', {
      body: {
        timezone: timezone.trim(),
        phone: phone.trim() === '' ? null : phone.trim(),
        notification_preferences: { channels: channelOn, quiet_hours: { enabled: quietOn, start: quietStart, end: quietEnd } },
      },
    });
    setBusy(false);
    if (failed) return setError(failed);
    notifications.show({ message: 'Profile saved' });
    await invalidatePaths('/api/portal/profile');
  }

  return (
    <Card withBorder component="form" aria-label="Settings" noValidate onSubmit={(e) => (e.preventDefault(), void save())}>
      <Stack gap="sm" maw={520}>
        <Autocomplete
          label="Timezone"
          description="An IANA name such as Europe/Paris; quiet hours follow it"
          data={timezones}
          limit={30}
          value={timezone}
          onChange={setTimezone}
          error={fieldError('body.timezone')}
        />
        <TextInput
          label="Phone"
          description="International format (E.164), e.g. +14155550100: the number the messaging channels know you by"
          placeholder="+14155550100"
          value={phone}
          onChange={(e) => setPhone(e.currentTarget.value)}
          error={fieldError('body.phone')}
        />
        <Checkbox.Group
          label="Notify me by"
          value={channels.filter(({ key }) => channelOn[key]).map(({ key }) => key)}
          onChange={(on) => setChannelOn(Object.fromEntries(channels.map(({ key }) => [key, on.includes(key)])) as Record<Channel, boolean>)}
          error={fieldError('body.notification_preferences.channels')}
        >
          <Group gap="md" mt={4}>
            {channels.map(({ key, label }) => (
              <Checkbox key={key} value={key} label={label} />
            ))}
          </Group>
        </Checkbox.Group>
        <Switch label="Quiet hours (no notifications)" checked={quietOn} onChange={(e) => setQuietOn(e.currentTarget.checked)} />
        <Group gap="sm" align="start">
          <TextInput type="time" label="Quiet from" value={quietStart} onChange={(e) => setQuietStart(e.currentTarget.value)} disabled={!quietOn} w={140} error={fieldError('body.notification_preferences.quiet_hours.start')} />
          <TextInput type="time" label="Quiet until" value={quietEnd} onChange={(e) => setQuietEnd(e.currentTarget.value)} disabled={!quietOn} w={140} error={fieldError('body.notification_preferences.quiet_hours.end')} />
        </Group>
        <ProblemAlert error={error} shownBeside={['body.timezone', 'body.phone', 'body.notification_preferences.channels', 'body.notification_preferences.quiet_hours.start', 'body.notification_preferences.quiet_hours.end']} />
        <Group>
          <Button type="submit" loading={busy}>
            Save settings
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

export default function ProfilePage() {
  const profile = $api.useQuery('get', '/api/portal/profile');
  const p = profile.data;
  return (
    <Stack gap="sm">
      <Title order={2}>Profile</Title>
      <ProblemAlert error={profile.error} />
      {profile.isPending && <Loading />}
      {p && (
        <>
          <Card withBorder component="section" aria-label="From your identity provider">
            <Text size="sm" c="dimmed" mb="xs">
              From your sign-in provider (change them there)
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="md">
              <Field label="Email">{p.email ?? '—'}</Field>
              <Field label="Display name">{p.display_name ?? '—'}</Field>
              <Field label="Roles">
                <Group gap={4}>
                  {p.roles.map((r) => (
                    <Badge key={r} variant="light">
                      {r}
                    </Badge>
                  ))}
                </Group>
              </Field>
            </SimpleGrid>
          </Card>
          {/* Keyed on the saved values: after a save (or another tab's), the form starts from what is stored. */}
          <ProfileForm key={JSON.stringify([p.timezone, p.phone, p.notification_preferences])} profile={p} />
        </>
      )}
    </Stack>
  );
}
