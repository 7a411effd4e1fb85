/** The pagers under a list: numbered pages over a total, or a cursor that lives in the URL. */
import { Button, Group, Pagination, Text } from '@mantine/core';

export function Pager({ total, pageSize, page, onPage }: { total: number; pageSize: number; page: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <Group justify="space-between" mt="sm">
      <Text size="sm" c="dimmed">
        {total} in all
      </Text>
      {pages > 1 && <Pagination total={pages} value={page} onChange={onPage} size="sm" aria-label="Pages" />}
    </Group>
  );
}

/** Pages of a cursor list (the CRM's `{data, next_cursor}`): back to the first page, or on to the next. */
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
