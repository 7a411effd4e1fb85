/** Accounts: text search and segment in the URL, cursor pages, a new account. */
import { Button, Group, Select, Stack, Table, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { ListBody, SearchInput } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { CursorPager } from './CursorPager';
import { opt, useUrlState } from '../../shared/url-state';
import { AccountForm, segments } from './AccountForm';

export default function AccountsPage() {
  const { values: f, set } = useUrlState(['q', 'segment', 'cursor'] as const);
  const [creating, setCreating] = useState(false);
  const accounts = $api.useQuery('get', '/api/v1/accounts', {
    params: { query: { q: opt(f.q), segment: opt(f.segment) as (typeof segments)[number] | undefined, cursor: opt(f.cursor), limit: 25 } },
  });
  const items = accounts.data?.data ?? [];
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Accounts</Title>
        <Button onClick={() => setCreating(true)}>New account</Button>
      </Group>
      {creating && <AccountForm onClose={() => setCreating(false)} />}
      <Group align="flex-end">
        <SearchInput placeholder="name or domain" value={f.q} onSearch={(q) => set({ q, cursor: '' })} w={260} />
        <Select label="Segment" placeholder="any" data={[...segments]} value={f.segment || null} onChange={(segment) => set({ segment: segment ?? '', cursor: '' })} clearable w={170} />
      </Group>
      <ProblemAlert error={accounts.error} />
      <ListBody pending={accounts.isPending} count={items.length} empty="No accounts match.">
        <Table striped highlightOnHover aria-label="Accounts">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Domain</Table.Th>
              <Table.Th>Industry</Table.Th>
              <Table.Th>Segment</Table.Th>
              <Table.Th>Created</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((a) => (
              <Table.Tr key={a.id}>
                <Table.Td>
                  <Link to={`/admin/crm/accounts/${a.id}`}>{a.name}</Link>
                </Table.Td>
                <Table.Td>{a.domain ?? '—'}</Table.Td>
                <Table.Td>{a.industry ?? '—'}</Table.Td>
                <Table.Td>{a.segment ?? '—'}</Table.Td>
                <Table.Td>{when(a.created_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ListBody>
      <CursorPager cursor={f.cursor} next={accounts.data?.next_cursor} shown={items.length} onCursor={(cursor) => set({ cursor })} />
    </Stack>
  );
}
