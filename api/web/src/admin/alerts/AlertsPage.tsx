/** Alerts dashboard: counts, filters in the URL, a page of alerts (silenced ones marked), acknowledge/resolve one or many. */
import { Badge, Button, Card, Checkbox, Group, MultiSelect, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconBellOff } from '@tabler/icons-react';
import { notifications } from '@mantine/notifications';
import { Link } from 'react-router';
import { useState } from 'react';
import { $api, fetchClient, invalidatePaths } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { when, statusColor } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { StatusBadge } from '../../shared/status-badge';
import { SearchInput } from '../../shared/layout';
import { opt, useUrlState } from '../../shared/url-state';

const pageSize = 25;
const statuses = ['firing', 'acknowledged', 'resolved'];
const severities = ['critical', 'warning', 'info'];

function Counts() {
  const counts = $api.useQuery('get', '/api/v1/alerts/counts');
  if (!counts.data) return null;
  const { by_status, by_severity } = counts.data;
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} mb="md">
      {Object.entries(by_status).map(([status, n]) => (
        <Card key={status} withBorder padding="sm" aria-label={`${status} count`}>
          <Text size="xs" c="dimmed" tt="uppercase">
            {status}
          </Text>
          <Text fw={700} size="xl" c={statusColor[status]}>
            {n}
          </Text>
        </Card>
      ))}
      {Object.entries(by_severity).map(([severity, n]) => (
        <Card key={severity} withBorder padding="sm" aria-label={`${severity} live count`}>
          <Text size="xs" c="dimmed" tt="uppercase">
            live {severity}
          </Text>
          <Text fw={700} size="xl">
            {n}
          </Text>
        </Card>
      ))}
    </SimpleGrid>
  );
}

export default function AlertsPage() {
  const { values: f, set, page, setPage } = useUrlState(['status', 'severity', 'source', 'label', 'q', 'since', 'until', 'silenced'] as const);
  const [selected, setSelected] = useState<string[]>([]);
  const [actionError, setActionError] = useState<unknown>(null);
  const query = {
    limit: pageSize,
    offset: (page - 1) * pageSize,
    status: opt(f.status),
    severity: opt(f.severity),
    source: opt(f.source),
    label: opt(f.label),
    q: opt(f.q),
    silenced: opt(f.silenced) as 'true' | 'false' | undefined,
    since: f.since ? new Date(f.since).toISOString() : undefined,
    until: f.until ? new Date(f.until).toISOString() : undefined,
  };
  const alerts = $api.useQuery('get', '/api/v1/alerts', { params: { query } }, { refetchInterval: 30_000 });

  async function move(action: 'acknowledge' | 'resolve', ids: string[]) {
    setActionError(null);
    const results = await Promise.all(
      ids.map((id) => fetchClient.POST(`/api/v1/alerts/{id}/${action}`, { params: { path: { id } }, body: {} })),
    );
    const failed = results.filter((r) => r.error);
    if (failed.length) setActionError(failed[0]!.error);
    const done = results.length - failed.length;
    if (done) notifications.show({ message: `${done} alert${done > 1 ? 's' : ''} ${action === 'acknowledge' ? 'acknowledged' : 'resolved'}` });
    setSelected([]);
    await invalidatePaths('/api/v1/alerts');
  }

  const items = alerts.data?.items ?? [];
  const allSelected = items.length > 0 && items.every((a) => selected.includes(a.id));
  return (
    <Stack gap="sm">
      <Title order={2}>Alerts</Title>
      <Counts />
      <Group align="end" gap="sm" wrap="wrap">
        <MultiSelect label="Status" data={statuses} value={f.status ? f.status.split(',') : []} onChange={(v) => set({ status: v.join(',') })} w={220} clearable />
        <MultiSelect
          label="Severity"
          data={severities}
          value={f.severity ? f.severity.split(',') : []}
          onChange={(v) => set({ severity: v.join(',') })}
          w={200}
          clearable
        />
        <TextInput label="Source" placeholder="alertmanager/default" defaultValue={f.source} onBlur={(e) => set({ source: e.currentTarget.value.trim() })} w={170} />
        <TextInput label="Label" placeholder="name=value" defaultValue={f.label} onBlur={(e) => set({ label: e.currentTarget.value.trim() })} w={150} />
        <SearchInput placeholder="name, label, annotation" value={f.q} onSearch={(q) => set({ q })} w={190} />
        <Select
          label="Silenced"
          data={[
            { value: 'true', label: 'silenced' },
            { value: 'false', label: 'not silenced' },
          ]}
          value={f.silenced || null}
          onChange={(v) => set({ silenced: v ?? '' })}
          w={140}
          clearable
        />
        <TextInput label="From" type="datetime-local" value={f.since} onChange={(e) => set({ since: e.currentTarget.value })} w={190} />
        <TextInput label="To" type="datetime-local" value={f.until} onChange={(e) => set({ until: e.currentTarget.value })} w={190} />
      </Group>
      <Group gap="sm">
        <Button size="xs" disabled={!selected.length} onClick={() => void move('acknowledge', selected)}>
          Acknowledge selected ({selected.length})
        </Button>
        <ConfirmButton
          size="xs"
          color="green"
          variant="light"
          disabled={!selected.length}
          question={`Resolve ${selected.length} alert(s)? A resolved alert does not come back; a new firing opens a new instance.`}
          confirmLabel="Resolve"
          onConfirm={() => void move('resolve', selected)}
        >
          Resolve selected ({selected.length})
        </ConfirmButton>
      </Group>
      <DataTable
        label="Alerts"
        error={actionError ?? alerts.error}
        pending={alerts.isPending}
        empty="No alerts match these filters."
        rows={items}
        rowKey={(a) => a.id}
        minWidth={760}
        columns={[
          {
            header: <Checkbox aria-label="Select all" checked={allSelected} onChange={() => setSelected(allSelected ? [] : items.map((a) => a.id))} />,
            w: 36,
            cell: (a) => (
              <Checkbox
                aria-label={`Select ${a.alertname}`}
                checked={selected.includes(a.id)}
                onChange={() => setSelected((s) => (s.includes(a.id) ? s.filter((x) => x !== a.id) : [...s, a.id]))}
              />
            ),
          },
          {
            header: 'Alert',
            cell: (a) => (
              <>
                <Link to={`/admin/alerts/${a.id}`}>{a.alertname}</Link>{' '}
                {a.flapping && (
                  <Badge color="orange" size="xs" variant="filled">
                    flapping
                  </Badge>
                )}{' '}
                {a.silenced && (
                  <Badge color="grape" size="xs" variant="light" leftSection={<IconBellOff size={10} />} aria-label={`${a.alertname} is silenced`}>
                    silenced
                  </Badge>
                )}
              </>
            ),
          },
          { header: 'Status', cell: (a) => <StatusBadge status={a.status} /> },
          { header: 'Severity', cell: (a) => a.severity },
          { header: 'Source', cell: (a) => `${a.source.kind}/${a.source.name}` },
          { header: 'Occurrences', cell: (a) => a.occurrence_count },
          { header: 'Last received', cell: (a) => when(a.last_received_at) },
          {
            header: 'Actions',
            cell: (a) => (
              <Group gap={4} wrap="nowrap">
                {a.status === 'firing' && (
                  <Button size="compact-xs" variant="light" onClick={() => void move('acknowledge', [a.id])} aria-label={`Acknowledge ${a.alertname}`}>
                    Acknowledge
                  </Button>
                )}
                {a.status !== 'resolved' && (
                  <ConfirmButton
                    size="compact-xs"
                    variant="light"
                    color="green"
                    question={`Resolve ${a.alertname}?`}
                    confirmLabel="Resolve"
                    onConfirm={() => void move('resolve', [a.id])}
                    aria-label={`Resolve ${a.alertname}`}
                  >
                    Resolve
                  </ConfirmButton>
                )}
              </Group>
            ),
          },
        ]}
        paging={alerts.data && { total: alerts.data.total, pageSize, page, onPage: setPage }}
      />
    </Stack>
  );
}
