/**
 * My profile: email, display name and roles as the identity provider gave them (read-only);
 * timezone and notification preferences editable, each refusal beside its field; the phone number
 * set only once proven with the code sent to it.
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
        <ProblemAlert error={error} shownBeside={['body.timezone', 'body.notification_preferences.channels', 'body.notification_preferences.quiet_hours.start', 'body.notification_preferences.quiet_hours.end']} />
        <Group>
          <Button type="submit" loading={busy}>
            Save settings
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

/**
 * The number the messaging channels know me by. A new one is proven first: a code is sent to it and
 * entered here; until then it reaches nobody (the server answers alike whoever has the number).
 */
function PhoneCard({ phone }: { phone: string | null }) {
  const [number, setNumber] = useState(phone ?? '');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fieldError = useFieldErrors(error);

  async function run(call: () => Promise<{ error?: unknown }>, done: () => Promise<void> | void) {
    setBusy(true);
    setError(null);
    const { error: failed } = await call();
    setBusy(false);
    if (failed) return setError(failed);
    await done();
  }
  const sendCode = () =>
    run(
      () => fetchClient.POST('/api/portal/profile/phone', { body: { phone: number.trim() } }),
      () => {
        setSentTo(number.trim());
        setCode('');
        notifications.show({ message: `Code sent to ${number.trim()}` });
      },
    );
  const verify = () =>
    run(
      () => fetchClient.POST('/api/portal/profile/phone/verify', { body: { code: code.trim() } }),
      async () => {
        notifications.show({ message: 'Phone number verified' });
        await invalidatePaths('/api/portal/profile');
      },
    );
  const remove = () =>
    run(
      () => fetchClient.PATCH('/api/portal/profile', { body: { phone: null } }),
      async () => {
        notifications.show({ message: 'Phone number removed' });
        await invalidatePaths('/api/portal/profile');
      },
    );

  return (
    <Card withBorder component="section" aria-label="Number the messaging channels know you by">
      <Stack gap="sm" maw={520}>
        <Text size="sm">{phone ? `Messages from ${phone} reach you.` : 'No number yet: the messaging channels do not know you.'}</Text>
        <Group align="start" wrap="nowrap">
          <TextInput
            flex={1}
            label="Phone"
            description="International format (E.164), e.g. +14155550100; a code is sent to it to prove it is yours"
            placeholder="+14155550100"
            value={number}
            onChange={(e) => setNumber(e.currentTarget.value)}
            error={fieldError('body.phone')}
          />
          <Button mt={46} onClick={() => void sendCode()} loading={busy && !sentTo} disabled={!number.trim() || number.trim() === phone}>
            Send code
          </Button>
        </Group>
        {sentTo && (
          <form aria-label="Enter the code" noValidate onSubmit={(e) => (e.preventDefault(), void verify())}>
            <Group align="start" wrap="nowrap">
              <TextInput
                flex={1}
                label="Code"
                description={`The 6 digits sent to ${sentTo}; they work once, for a few minutes`}
                inputMode="numeric"
                autoComplete="one-time-code"
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
                error={fieldError('body.code')}
              />
              <Button mt={28} type="submit" loading={busy}>
                Verify
              </Button>
            </Group>
          </form>
        )}
        <ProblemAlert error={error} shownBeside={['body.phone', 'body.code']} />
        {phone && (
          <Group>
            <Button variant="subtle" color="red" onClick={() => void remove()}>
              Remove number
            </Button>
          </Group>
        )}
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
          <PhoneCard key={p.phone ?? ''} phone={p.phone} />
          <ProfileForm key={JSON.stringify([p.timezone, p.notification_preferences])} profile={p} />
        </>
      )}
    </Stack>
  );
}
