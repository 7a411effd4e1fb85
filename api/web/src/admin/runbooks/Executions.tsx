/** Runbook executions (all, or one runbook's): status, timing, trigger and the alert behind it. */
import { Table } from '@mantine/core';
import { Link } from 'react-router';
import type { Schemas } from '../../api/client';
import { duration, when } from '../../shared/format';
import { Empty } from '../../shared/states';
import { StatusBadge } from '../../shared/status-badge';

export function ExecutionsTable({ items, showRunbook }: { items: Schemas['RunbookExecution'][]; showRunbook: boolean }) {
  if (!items.length) return <Empty>No executions yet.</Empty>;
  return (
    <Table.ScrollContainer minWidth={700}>
      <Table striped aria-label="Executions">
        <Table.Thead>
          <Table.Tr>
            {showRunbook && <Table.Th>Runbook</Table.Th>}
            <Table.Th>Status</Table.Th>
            <Table.Th>Trigger</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Duration</Table.Th>
            <Table.Th>Alert</Table.Th>
            <Table.Th>Error</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((x) => (
            <Table.Tr key={x.id}>
              {showRunbook && (
                <Table.Td>
                  <Link to={`/admin/runbooks/${x.runbook_id}`}>{x.runbook_name}</Link>
                </Table.Td>
              )}
              <Table.Td>
                <StatusBadge status={x.status} />
              </Table.Td>
              <Table.Td>
                {x.trigger} · {x.triggered_by}
              </Table.Td>
              <Table.Td>{when(x.created_at)}</Table.Td>
              <Table.Td>{duration(x.started_at, x.finished_at)}</Table.Td>
              <Table.Td>{x.alert_id ? <Link to={`/admin/alerts/${x.alert_id}`}>alert</Link> : '—'}</Table.Td>
              <Table.Td c="red">{x.error ?? ''}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
