/** One runbook: its settings, edit, execute, delete, and its executions. */
import { Badge, Button, Card, Code, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useNavigate, useParams } from 'react-router';
import { $api, invalidatePaths } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { matcherText } from '../../shared/matchers';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { ExecutionsTable } from './Executions';
import { RunbookForm } from './RunbookForm';

export default function RunbookDetail() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [editing, { open, close }] = useDisclosure(false);
  const runbook = $api.useQuery('get', '/api/v1/runbooks/{id}', { params: { path: { id } } });
  const executions = $api.useQuery('get', '/api/v1/runbooks/{id}/executions', { params: { path: { id }, query: { limit: 50 } } }, { refetchInterval: 5_000 });
  const execute = $api.useMutation('post', '/api/v1/runbooks/{id}/execute', {
    onSuccess: async () => {
      notifications.show({ message: 'Execution queued' });
      await invalidatePaths('/api/v1/runbooks');
    },
  });
  const remove = $api.useMutation('delete', '/api/v1/runbooks/{id}', {
    onSuccess: async () => {
      await invalidatePaths('/api/v1/runbooks');
      navigate('/admin/runbooks');
    },
  });
  if (runbook.isPending) return <Loading />;
  if (!runbook.data) return <ProblemAlert error={runbook.error} />;
  const r = runbook.data;
  return (
    <Stack gap="md">
      <BackLink to="/admin/runbooks">Runbooks</BackLink>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>{r.name}</Title>
          <Badge variant="outline">{r.auto_trigger ? 'automatic' : 'manual'}</Badge>
          {!r.enabled && <Badge color="gray">disabled</Badge>}
        </Group>
        <Group gap="sm">
          <Button loading={execute.isPending} onClick={() => execute.mutate({ params: { path: { id } }, body: { input: {} } })}>
            Execute
          </Button>
          <Button variant="default" onClick={open}>
            Edit
          </Button>
          <ConfirmButton variant="light" question={`Delete the runbook "${r.name}"? Its executions are kept.`} confirmLabel="Delete" onConfirm={() => remove.mutate({ params: { path: { id } } })}>
            Delete
          </ConfirmButton>
        </Group>
      </Group>
      {editing && <RunbookForm runbook={r} opened={editing} onClose={close} />}
      <ProblemAlert error={execute.error ?? remove.error} />
      {r.description && <Text>{r.description}</Text>}
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Text>
          <b>Matchers</b> {r.matchers.length ? r.matchers.map(matcherText).join(', ') : 'any alert'}
        </Text>
        <Text>
          <b>Severities</b> {r.severities.length ? r.severities.join(', ') : 'any'}
        </Text>
        <Text style={{ wordBreak: 'break-all' }}>
          <b>Workflow</b> <Code>{r.webhook_url}</Code> {r.workflow_id && `(${r.workflow_id})`}
        </Text>
        <Text>
          <b>Timeout</b> {r.timeout_seconds} s
        </Text>
      </SimpleGrid>
      <Card withBorder>
        <Text fw={600} mb="xs">
          Executions
        </Text>
        {executions.data ? <ExecutionsTable items={executions.data.items} showRunbook={false} /> : <Loading />}
      </Card>
    </Stack>
  );
}
