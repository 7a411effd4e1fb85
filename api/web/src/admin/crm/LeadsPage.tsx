/** Leads: filters by status, source and text in the URL, cursor pages, and a new lead. New leads appear live (CRM events). */
import { Autocomplete, Badge, Button, Group, Select, Stack, Table, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useState } from 'react';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { ListBody, SearchInput } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { CursorPager } from './CursorPager';
import { opt, useUrlState } from '../../shared/url-state';
import { leadSources, leadStatusColor, leadStatuses } from './format';
import { LeadForm } from './LeadForm';

type Status = 'new' | 'contacted' | 'qualified' | 'unqualified' | 'converted';

export default function LeadsPage() {
  const { values: f, set } = useUrlState(['status', 'source', 'q', 'cursor'] as const);
  const [creating, setCreating] = useState(false);
  const leads = $api.useQuery('get', '/api/v1/leads', {
    params: { query: { status: opt(f.status) as Status | undefined, source: opt(f.source), q: opt(f.q), cursor: opt(f.cursor), limit: 25 } },
  });
  const items = leads.data?.data ?? [];
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Leads</Title>
        <Button onClick={() => setCreating(true)}>New lead</Button>
      </Group>
      {creating && <LeadForm onClose={() => setCreating(false)} />}
      <Group align="flex-end">
        <Select label="Status" placeholder="any" data={leadStatuses} value={f.status || null} onChange={(status) => set({ status: status ?? '', cursor: '' })} clearable w={160} />
        <Autocomplete
          label="Source"
          placeholder="any"
          data={leadSources}
          defaultValue={f.source}
          onOptionSubmit={(source) => set({ source, cursor: '' })}
          onBlur={(e) => set({ source: e.currentTarget.value.trim(), cursor: '' })}
          w={180}
        />
        <SearchInput placeholder="name, email or company" value={f.q} onSearch={(q) => set({ q, cursor: '' })} w={260} />
      </Group>
      <ProblemAlert error={leads.error} />
      <ListBody pending={leads.isPending} count={items.length} empty="No leads match.">
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover aria-label="Leads">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Company</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Source</Table.Th>
                <Table.Th>Est. value</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((l) => (
                <Table.Tr key={l.id}>
                  <Table.Td>
                    <Link to={`/admin/crm/leads/${l.id}`}>
                      {l.first_name} {l.last_name}
                    </Link>
                  </Table.Td>
                  <Table.Td>{l.company ?? '—'}</Table.Td>
                  <Table.Td>{l.email ?? '—'}</Table.Td>
                  <Table.Td>
                    <Badge color={leadStatusColor[l.status]} variant="light">
                      {l.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{l.source ?? '—'}</Table.Td>
                  <Table.Td>{l.estimated_value ?? '—'}</Table.Td>
                  <Table.Td>{when(l.created_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </ListBody>
      <CursorPager cursor={f.cursor} next={leads.data?.next_cursor} shown={items.length} onCursor={(cursor) => set({ cursor })} />
    </Stack>
  );
}
