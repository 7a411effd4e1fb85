/** What a portal detail page shows for an id the person cannot see (the API answers 404 alike for unknown and someone else's). */
import { Stack, Text, Title } from '@mantine/core';
import { isProblem } from '../api/client';
import { BackLink } from '../shared/layout';

export const isNotFound = (error: unknown) => isProblem(error) && error.status === 404;

export function RecordNotFound({ what, back, backLabel }: { what: string; back: string; backLabel: string }) {
  return (
    <Stack>
      <BackLink to={back}>{backLabel}</BackLink>
      <Title order={2}>{what} not found</Title>
      <Text c="dimmed">There is no {what.toLowerCase()} at this address that you can see.</Text>
    </Stack>
  );
}
