import { Group, Pagination, Text } from '@mantine/core';

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
