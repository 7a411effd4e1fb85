/** Pages of a cursor list (the CRM's `{data, next_cursor}`): the cursor lives in the URL; back to the first page, or on to the next. */
import { Button, Group, Text } from '@mantine/core';

export function CursorPager({ cursor, next, shown, onCursor }: { cursor: string; next: string | null | undefined; shown: number; onCursor: (cursor: string) => void }) {
  return (
    <Group justify="space-between">
      <Text size="sm" c="dimmed">
        {cursor ? 'A later page' : 'First page'} · {shown} shown
      </Text>
      <Group gap="xs">
        {cursor && (
          <Button variant="default" size="xs" onClick={() => onCursor('')}>
            First page
          </Button>
        )}
        {next && (
          <Button variant="default" size="xs" onClick={() => onCursor(next)}>
            Next page
          </Button>
        )}
      </Group>
    </Group>
  );
}
