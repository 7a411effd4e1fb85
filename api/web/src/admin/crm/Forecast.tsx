/** The forecast of a pipeline: per stage count, value and weighted value, open stages and closed ones (won, lost) apart. */
import { Badge, Card, Group, SimpleGrid, Table, Text } from '@mantine/core';
import { $api } from '../../api/client';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { money } from './format';

function Figure({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </div>
  );
}

export function Forecast({ pipelineId }: { pipelineId: string }) {
  const summary = $api.useQuery('get', '/api/v1/pipelines/{pipeline_id}/summary', { params: { path: { pipeline_id: pipelineId } } });
  if (summary.error) return <ProblemAlert error={summary.error} />;
  if (!summary.data) return <Loading />;
  const { stages, totals } = summary.data;
  const rows = Object.entries(stages);
  return (
    <Card withBorder aria-label="Forecast">
      <Text fw={600} mb="xs">
        Forecast
      </Text>
      <SimpleGrid cols={{ base: 2, md: 4 }} mb="sm">
        <Figure label="Open pipeline" value={money(totals.pipeline_value)} hint={`${totals.opportunities} open ${totals.opportunities === 1 ? 'opportunity' : 'opportunities'}`} />
        <Figure label="Weighted (open)" value={money(totals.weighted_value)} hint="Σ amount × probability" />
        <Figure label="Closed won" value={money(totals.won.value)} hint={`${totals.won.count} won`} />
        <Figure label="Closed lost" value={money(totals.lost.value)} hint={`${totals.lost.count} lost`} />
      </SimpleGrid>
      <Table aria-label="Forecast by stage" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Stage</Table.Th>
            <Table.Th>Probability</Table.Th>
            <Table.Th ta="right">Count</Table.Th>
            <Table.Th ta="right">Value</Table.Th>
            <Table.Th ta="right">Weighted</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map(([name, s]) => (
            <Table.Tr key={name}>
              <Table.Td>
                <Group gap={6}>
                  {name}
                  {s.state !== 'open' && (
                    <Badge size="xs" color={s.state === 'won' ? 'green' : 'gray'} variant="light">
                      closed · {s.state}
                    </Badge>
                  )}
                </Group>
              </Table.Td>
              <Table.Td>{s.probability} %</Table.Td>
              <Table.Td ta="right">{s.count}</Table.Td>
              <Table.Td ta="right">{money(s.value)}</Table.Td>
              <Table.Td ta="right">{s.state === 'open' ? money(s.weighted_value) : '—'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr>
            <Table.Th>Open total</Table.Th>
            <Table.Th />
            <Table.Th ta="right">{totals.opportunities}</Table.Th>
            <Table.Th ta="right">{money(totals.pipeline_value)}</Table.Th>
            <Table.Th ta="right">{money(totals.weighted_value)}</Table.Th>
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </Card>
  );
}
