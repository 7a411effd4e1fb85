/** The pages for a refused or unknown address: 403 and 404. */
import { Stack, Text, Title } from '@mantine/core';

export function Forbidden() {
  return (
    <Stack>
      <Title order={2}>403 — not allowed</Title>
      <Text c="dimmed">The console is for the SRE role. Ask an administrator if you need it.</Text>
    </Stack>
  );
}

export function NotFound() {
  return (
    <Stack>
      <Title order={2}>Page not found</Title>
      <Text c="dimmed">Nothing lives at this address.</Text>
    </Stack>
  );
}
