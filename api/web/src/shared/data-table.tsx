/**
 * The one list table of the console and the portal: filters above, the failure, the loading and
 * empty states, the columns (cards instead on a phone, where a page gives them), and the pager below.
 * A list page says what its rows are; how a list looks and pages lives here.
 */
import { Card, Group, Stack, Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { ListBody, useNarrow } from './layout';
import { CursorPager, Pager } from './pager';
import { ProblemAlert } from './problem';

export type Column<T> = {
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** A fixed width (a narrow icon column). */
  w?: number;
  /** Keeps the cell on one line (dates, badges), so a tight table scrolls rather than breaking them. */
  nowrap?: boolean;
};

/** Numbered pages over a total (offset lists), or a cursor in the URL (the CRM's `{data, next_cursor}`). */
export type Paging =
  | { total: number; pageSize: number; page: number; onPage: (page: number) => void }
  | { cursor: string; next: string | null | undefined; onCursor: (cursor: string) => void };

export function DataTable<T>({
  label,
  rows,
  rowKey,
  columns,
  pending = false,
  error,
  empty,
  filters,
  paging,
  card,
  minWidth = 700,
  hover = true,
}: {
  /** The accessible name of the table (and of the card list). */
  label: string;
  rows: T[];
  rowKey: (row: T) => string;
  /** A column is left out when false (a column only some people see). */
  columns: (Column<T> | false)[];
  pending?: boolean;
  error?: unknown;
  empty: ReactNode;
  filters?: ReactNode;
  paging?: Paging;
  /** The body of one row's card on a phone; without it phones get the table, scrolling. */
  card?: (row: T) => ReactNode;
  minWidth?: number;
  hover?: boolean;
}) {
  const narrow = useNarrow();
  const shown = columns.filter((c): c is Column<T> => c !== false);
  return (
    <>
      {filters && (
        <Group align="end" gap="sm" wrap="wrap">
          {filters}
        </Group>
      )}
      {error ? <ProblemAlert error={error} /> : null}
      <ListBody pending={pending} count={rows.length} empty={empty}>
        {card && narrow ? (
          <Stack gap="xs" role="list" aria-label={label}>
            {rows.map((row) => (
              <Card key={rowKey(row)} withBorder padding="sm" role="listitem">
                {card(row)}
              </Card>
            ))}
          </Stack>
        ) : (
          <Table.ScrollContainer minWidth={minWidth}>
            <Table striped highlightOnHover={hover} aria-label={label}>
              <Table.Thead>
                <Table.Tr>
                  {shown.map((c, i) => (
                    <Table.Th key={i} w={c.w}>
                      {c.header}
                    </Table.Th>
                  ))}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((row) => (
                  <Table.Tr key={rowKey(row)}>
                    {shown.map((c, i) => (
                      <Table.Td key={i} style={c.nowrap ? { whiteSpace: 'nowrap' } : undefined}>
                        {c.cell(row)}
                      </Table.Td>
                    ))}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </ListBody>
      {paging && ('cursor' in paging ? <CursorPager cursor={paging.cursor} next={paging.next} shown={rows.length} onCursor={paging.onCursor} /> : <Pager {...paging} />)}
    </>
  );
}
