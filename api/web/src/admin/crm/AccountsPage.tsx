/** Accounts: text search and segment in the URL, cursor pages, a new account. */
import { Button, Group, Select, Stack, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { opt, useUrlState } from '../../shared/url-state';
import { AccountForm, segments } from './AccountForm';

export default function AccountsPage() {
  const { values: f, set } = useUrlState(['q', 'segment', 'cursor'] as const);
  const [creating, setCreating] = useState(false);
  const accounts = $api.useQuery('get', '/api/v1/accounts', {
    params: { query: { q: opt(f.q), segment: opt(f.segment) as (typeof segments)[number] | undefined, cursor: opt(f.cursor), limit: 25 } },
  });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Accounts</Title>
        <Button onClick={() => setCreating(true)}>New account</Button>
      </Group>
      {creating && <AccountForm onClose={() => setCreating(false)} />}
      <DataTable
        label="Accounts"
        filters={
          <>
            <SearchInput placeholder="name or domain" value={f.q} onSearch={(q) => set({ q, cursor: '' })} w={260} />
            <Select label="Segment" placeholder="any" data={[...segments]} value={f.segment || null} onChange={(segment) => set({ segment: segment ?? '', cursor: '' })} clearable w={170} />
          </>
        }
        error={accounts.error}
        pending={accounts.isPending}
        empty="No accounts match."
        rows={accounts.data?.data ?? []}
        rowKey={(a) => a.id}
        minWidth={600}
        columns={[
          { header: 'Name', cell: (a) => <Link to={`/admin/crm/accounts/${a.id}`}>{a.name}</Link> },
          { header: 'Domain', cell: (a) => a.domain ?? '—' },
          { header: 'Industry', cell: (a) => a.industry ?? '—' },
          { header: 'Segment', cell: (a) => a.segment ?? '—' },
          { header: 'Created', cell: (a) => when(a.created_at) },
        ]}
        paging={{ cursor: f.cursor, next: accounts.data?.next_cursor, onCursor: (cursor) => set({ cursor }) }}
      />
    </Stack>
  );
}
