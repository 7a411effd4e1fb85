/** Leads: filters by status, source and text in the URL, cursor pages, and a new lead. New leads appear live (CRM events). */
import { Autocomplete, Button, Group, Select, Stack, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useState } from 'react';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { StatusBadge } from '../../shared/status-badge';
import { opt, useUrlState } from '../../shared/url-state';
import { estimate, leadSources, leadStatusColor, leadStatuses } from './format';
import { LeadForm } from './LeadForm';

type Status = 'new' | 'contacted' | 'qualified' | 'unqualified' | 'converted';

export default function LeadsPage() {
  const { values: f, set } = useUrlState(['status', 'source', 'q', 'cursor'] as const);
  const [creating, setCreating] = useState(false);
  const leads = $api.useQuery('get', '/api/v1/leads', {
    params: { query: { status: opt(f.status) as Status | undefined, source: opt(f.source), q: opt(f.q), cursor: opt(f.cursor), limit: 25 } },
  });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Leads</Title>
        <Button onClick={() => setCreating(true)}>New lead</Button>
      </Group>
      {creating && <LeadForm onClose={() => setCreating(false)} />}
      <DataTable
        label="Leads"
        filters={
          <>
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
          </>
        }
        error={leads.error}
        pending={leads.isPending}
        empty="No leads match."
        rows={leads.data?.data ?? []}
        rowKey={(l) => l.id}
        minWidth={800}
        columns={[
          {
            header: 'Name',
            cell: (l) => (
              <Link to={`/admin/crm/leads/${l.id}`}>
                {l.first_name} {l.last_name}
              </Link>
            ),
          },
          { header: 'Company', cell: (l) => l.company ?? '—' },
          { header: 'Email', cell: (l) => l.email ?? '—' },
          { header: 'Status', cell: (l) => <StatusBadge status={l.status} color={leadStatusColor[l.status]} /> },
          { header: 'Source', cell: (l) => l.source ?? '—' },
          { header: 'Est. value', cell: (l) => estimate(l.estimated_value), nowrap: true },
          { header: 'Created', cell: (l) => when(l.created_at) },
        ]}
        paging={{ cursor: f.cursor, next: leads.data?.next_cursor, onCursor: (cursor) => set({ cursor }) }}
      />
    </Stack>
  );
}
