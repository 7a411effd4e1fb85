/** Every entity monitor: filter by status, enable/disable, remove, and deploy them all. */
import { Button, Group, Select, Stack, Text, Title } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { opt, useUrlState } from '../../shared/url-state';
import { DeployHeader, MonitorsTable } from './monitors';

const pageSize = 50;
const statuses = ['pending', 'deployed', 'disabled'] as const;

export default function MonitorsPage() {
  const { values: f, set, page, setPage } = useUrlState(['status'] as const);
  const monitors = $api.useQuery('get', '/api/v1/cmdb/monitors', {
    params: { query: { limit: pageSize, offset: (page - 1) * pageSize, status: opt(f.status) as (typeof statuses)[number] | undefined } },
  });
  const items = monitors.data?.items ?? [];
  // The list carries entity ids only: the names of this page's entities (cached, shared with the entity screens).
  const entityIds = [...new Set(items.map((m) => m.entity_id))];
  const entities = useQueries({ queries: entityIds.map((id) => $api.queryOptions('get', '/api/v1/cmdb/entities/{id}', { params: { path: { id } } })) });
  const entityOf = new Map(entities.flatMap((q) => (q.data ? [[q.data.id, q.data] as const] : [])));
  return (
    <Stack gap="sm">
      <DeployHeader title={<Title order={2}>Monitors</Title>} />
      <Text size="sm" c="dimmed">
        Alerting rules deployed to the metrics system for CMDB entities. A disabled monitor is kept but left out of the rule file from the next deploy on; monitors of entities gone
        stale are taken out at the next deploy.
      </Text>
      <Select label="Status" placeholder="any" data={statuses} value={f.status || null} onChange={(v) => set({ status: v ?? '' })} w={160} clearable />
      <MonitorsTable
        monitors={items}
        pending={monitors.isPending}
        error={monitors.error}
        empty="No monitors. Apply a recommendation on an entity's page to make one."
        entityCell={(m) => (
          <>
            <Link to={`/admin/cmdb/${m.entity_id}`}>{entityOf.get(m.entity_id)?.name ?? 'entity'}</Link>
            <Text size="xs" c="dimmed">
              {entityOf.get(m.entity_id)?.type}
            </Text>
          </>
        )}
      />
      {(page > 1 || items.length === pageSize) && (
        <Group gap="xs">
          <Button size="xs" variant="default" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <Button size="xs" variant="default" disabled={items.length < pageSize} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </Group>
      )}
    </Stack>
  );
}
