/** CMDB browser: entities with filters in the URL, a manual entity by hand, and deploy-all of the pending monitors. */
import { Badge, Button, Select, Stack, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { opt, useUrlState } from '../../shared/url-state';
import type { Schemas } from '../../api/client';
import { DeployHeader } from './monitors';
import { EntityForm, healths } from './EntityForm';

const pageSize = 25;
type Entity = Schemas['CmdbEntity'];

export default function EntitiesPage() {
  const types = $api.useQuery('get', '/api/v1/cmdb/entity-types');
  const sources = $api.useQuery('get', '/api/v1/cmdb/discovery/sources');
  const { values: f, set, page, setPage } = useUrlState(['type', 'source', 'health', 'stale', 'q'] as const);
  const entities = $api.useQuery('get', '/api/v1/cmdb/entities', {
    params: {
      query: {
        limit: pageSize,
        offset: (page - 1) * pageSize,
        type: opt(f.type) as Entity['type'] | undefined,
        source: opt(f.source),
        health: opt(f.health) as Entity['health'] | undefined,
        stale: opt(f.stale) as 'true' | 'false' | undefined,
        q: opt(f.q),
      },
    },
  });
  const [creating, setCreating] = useState(false);
  return (
    <Stack gap="sm">
      <DeployHeader title={<Title order={2}>CMDB</Title>} actions={<Button onClick={() => setCreating(true)}>New entity</Button>} />
      <DataTable
        label="Entities"
        filters={
          <>
            <Select label="Type" placeholder="any" data={types.data?.items ?? []} value={f.type || null} onChange={(v) => set({ type: v ?? '' })} w={170} clearable />
            <Select label="Source" placeholder="any" data={(sources.data?.items ?? []).map((s) => s.name)} value={f.source || null} onChange={(v) => set({ source: v ?? '' })} w={150} clearable />
            <Select label="Health" placeholder="any" data={healths} value={f.health || null} onChange={(v) => set({ health: v ?? '' })} w={140} clearable />
            <Select label="Stale" placeholder="any" data={['true', 'false']} value={f.stale || null} onChange={(v) => set({ stale: v ?? '' })} w={100} clearable />
            <SearchInput placeholder="name, key, attribute" value={f.q} onSearch={(q) => set({ q })} />
          </>
        }
        error={entities.error}
        pending={entities.isPending}
        empty="No entities match. Run discovery to fill the CMDB."
        rows={entities.data?.items ?? []}
        rowKey={(e) => e.id}
        columns={[
          {
            header: 'Name',
            cell: (e) => (
              <>
                <Link to={`/admin/cmdb/${e.id}`}>{e.name}</Link> {e.stale && <Badge color="gray" size="xs">stale</Badge>}
              </>
            ),
          },
          { header: 'Type', cell: (e) => e.type },
          { header: 'Source', cell: (e) => e.source },
          { header: 'Health', cell: (e) => <StatusBadge status={e.health} /> },
          { header: 'Last seen', cell: (e) => when(e.last_seen_at) },
        ]}
        paging={entities.data && { total: entities.data.total, pageSize, page, onPage: setPage }}
      />
      {creating && <EntityForm types={types.data?.items ?? []} onClose={() => setCreating(false)} />}
    </Stack>
  );
}
