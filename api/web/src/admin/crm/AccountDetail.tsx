/** One account with its opportunities (stage, amount, close date) and what they add up to. */
import { Badge, Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { $api } from '../../api/client';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Empty, Loading } from '../../shared/states';
import { AccountForm } from './AccountForm';
import { day, money } from './format';

export default function AccountDetail() {
  const { id = '' } = useParams();
  const [editing, setEditing] = useState(false);
  const account = $api.useQuery('get', '/api/v1/accounts/{account_id}', { params: { path: { account_id: id } } });
  if (account.error) return <ProblemAlert error={account.error} />;
  if (!account.data) return <Loading />;
  const a = account.data;
  const open = a.opportunities.filter((o) => o.probability > 0 && o.probability < 100);
  return (
    <Stack gap="sm">
      <BackLink to="/admin/crm/accounts">Accounts</BackLink>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>{a.name}</Title>
          {a.segment && <Badge variant="light">{a.segment}</Badge>}
        </Group>
        <Button variant="default" onClick={() => setEditing(true)}>
          Edit
        </Button>
      </Group>
      {editing && <AccountForm account={a} onClose={() => setEditing(false)} />}
      <Text size="sm" c="dimmed">
        {[a.domain, a.industry].filter(Boolean).join(' · ') || 'No domain or industry yet'}
      </Text>
      <Card withBorder>
        <Group justify="space-between" mb="xs">
          <Text fw={600}>Opportunities</Text>
          <Text size="sm" c="dimmed">
            {open.length} open · {money(open.reduce((s, o) => s + o.amount, 0))}
          </Text>
        </Group>
        {a.opportunities.length ? (
          <Table aria-label="Opportunities" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Stage</Table.Th>
                <Table.Th ta="right">Amount</Table.Th>
                <Table.Th>Probability</Table.Th>
                <Table.Th>Close date</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {a.opportunities.map((o) => (
                <Table.Tr key={o.id}>
                  <Table.Td>
                    <Link to={`/admin/crm/pipeline?pipeline=${o.pipeline_id}&highlight=${o.id}`}>{o.name}</Link>
                  </Table.Td>
                  <Table.Td>{o.stage}</Table.Td>
                  <Table.Td ta="right">{money(o.amount)}</Table.Td>
                  <Table.Td>{o.probability} %</Table.Td>
                  <Table.Td>{day(o.close_date)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : (
          <Empty>No opportunities yet.</Empty>
        )}
      </Card>
    </Stack>
  );
}
