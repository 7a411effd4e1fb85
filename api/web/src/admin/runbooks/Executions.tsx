/** Runbook executions (all, or one runbook's): status, timing, trigger and the alert behind it. */
import { Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Schemas } from '../../api/client';
import { duration, when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { StatusBadge } from '../../shared/status-badge';

export function ExecutionsTable({ items, showRunbook }: { items: Schemas['RunbookExecution'][]; showRunbook: boolean }) {
  return (
    <DataTable
      label="Executions"
      empty="No executions yet."
      rows={items}
      rowKey={(x) => x.id}
      hover={false}
      columns={[
        showRunbook && { header: 'Runbook', cell: (x) => <Link to={`/admin/runbooks/${x.runbook_id}`}>{x.runbook_name}</Link> },
        { header: 'Status', cell: (x) => <StatusBadge status={x.status} /> },
        { header: 'Trigger', cell: (x) => `${x.trigger} · ${x.triggered_by}` },
        { header: 'Created', cell: (x) => when(x.created_at) },
        { header: 'Duration', cell: (x) => duration(x.started_at, x.finished_at) },
        { header: 'Alert', cell: (x) => (x.alert_id ? <Link to={`/admin/alerts/${x.alert_id}`}>alert</Link> : '—') },
        { header: 'Error', cell: (x) => (x.error ? <Text span c="red" size="sm">{x.error}</Text> : '') },
      ]}
    />
  );
}
