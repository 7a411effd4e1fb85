/** The portal's front page: my open cases, my documents and how far their indexing got, and the way into chat. */
import { Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { IconMessageCircle } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { when } from '../../shared/format';
import { ListBody } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';
import { useMe } from '../../shared/auth';
import { pollWhileIndexing, RagStatus } from '../documents/rag';

const shown = 5;

/** A card of the home page: its title with a count, a link to the whole list, and a few rows. */
function HomeCard({ title, count, countLabel, to, linkLabel, children }: { title: string; count?: number; countLabel: string; to: string; linkLabel: string; children: ReactNode }) {
  return (
    <Card withBorder component="section" aria-label={`My ${title.toLowerCase()}`}>
      <Group justify="space-between" mb="xs">
        <Text fw={600}>
          {title}{' '}
          {count !== undefined && (
            <Text span c="dimmed" aria-label={countLabel}>
              ({count})
            </Text>
          )}
        </Text>
        <Link to={to}>{linkLabel}</Link>
      </Group>
      {children}
    </Card>
  );
}
const openStatuses = ['open', 'in_progress', 'waiting'] as const;

function OpenCases() {
  const cases = $api.useQuery('get', '/api/portal/cases', { params: { query: { status: openStatuses.join(','), mine: 'true' } } });
  const items = cases.data?.cases ?? [];
  return (
    <HomeCard title="Open cases" count={cases.data && items.length} countLabel="Open case count" to="/cases" linkLabel="All cases">
      <ProblemAlert error={cases.error} />
      <ListBody pending={cases.isPending} count={items.length} empty="No open cases.">
        <Table aria-label="Open cases">
          <Table.Tbody>
            {items.slice(0, shown).map((c) => (
              <Table.Tr key={c.case_id}>
                <Table.Td>
                  <Link to={`/cases/${c.case_id}`}>{c.title}</Link>
                </Table.Td>
                <Table.Td w={60}>{c.priority}</Table.Td>
                <Table.Td w={110}>
                  <StatusBadge status={c.status} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ListBody>
    </HomeCard>
  );
}

function RecentDocuments() {
  const documents = $api.useQuery('get', '/api/portal/documents', {}, { refetchInterval: pollWhileIndexing((d: { documents: Schemas['Document'][] }) => d.documents) });
  const items = documents.data?.documents ?? [];
  return (
    <HomeCard title="Documents" count={documents.data && items.length} countLabel="Document count" to="/documents" linkLabel="All documents">
      <ProblemAlert error={documents.error} />
      <ListBody pending={documents.isPending} count={items.length} empty="No documents yet.">
        <Table aria-label="Recent documents">
          <Table.Tbody>
            {items.slice(0, shown).map((d) => (
              <Table.Tr key={d.document_id}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>
                  <Link to={`/documents/${d.document_id}`}>{d.filename}</Link>
                  <Text size="xs" c="dimmed">
                    {when(d.uploaded_at)}
                  </Text>
                </Table.Td>
                <Table.Td w={120}>
                  <RagStatus document={d} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ListBody>
    </HomeCard>
  );
}

export default function PortalHome() {
  const me = useMe();
  return (
    <Stack gap="md">
      <Group justify="space-between" align="center">
        <Title order={2}>Hello, {me.name}</Title>
        <Button component={Link} to="/portal/chat" leftSection={<IconMessageCircle size={18} />}>
          Chat with the assistant
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
        <OpenCases />
        <RecentDocuments />
      </SimpleGrid>
    </Stack>
  );
}
