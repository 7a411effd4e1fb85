/** Loading and empty states, one look everywhere. */
import { Center, Loader, Text } from '@mantine/core';
import type { ReactNode } from 'react';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" aria-busy="true">
      <Loader size="sm" mr="sm" />
      <Text c="dimmed">{label}</Text>
    </Center>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <Center py="xl">
      <Text c="dimmed">{children}</Text>
    </Center>
  );
}
