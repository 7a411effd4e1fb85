/** Small pieces the portal's screens share: a labelled value, a row of tags. */
import { Badge, Group, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/** A read-only value under its label (detail cards). */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase">
        {label}
      </Text>
      <div>{children}</div>
    </div>
  );
}

export function Tags({ tags }: { tags: string[] }) {
  if (!tags.length) return <>—</>;
  return (
    <Group gap={4}>
      {tags.map((t) => (
        <Badge key={t} size="sm" variant="outline" color="gray" tt="none">
          {t}
        </Badge>
      ))}
    </Group>
  );
}
