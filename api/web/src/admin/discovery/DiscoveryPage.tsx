/** Discovery status: each source's last runs, the run history, a trigger that follows its run, enable/disable and delete a source. */
import { Alert, Badge, Button, Card, Group, Loader, SimpleGrid, Stack, Switch, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useEffect, useState } from 'react';
import { $api, invalidatePaths } from '../../api/client';
import { duration, statusColor, when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { ProblemAlert } from '../../shared/problem';
import { ConfirmButton } from '../../shared/confirm';
import { Loading } from '../../shared/states';
import { DataTable } from '../../shared/data-table';

/** Polls the triggered run each second until it has ended. */
function FollowRun({ id }: { id: string }) {
  const run = $api.useQuery('get', '/api/v1/cmdb/discovery/runs/{id}', { params: { path: { id } } }, {
    refetchInterval: (q) => (q.state.data?.status === 'running' ? 1000 : false),
  });
  const r = run.data;
  const ended = !!r && r.status !== 'running';
  useEffect(() => {
    if (ended) void invalidatePaths('/api/v1/cmdb/discovery/status', '/api/v1/cmdb/entities');
  }, [ended]);
  if (!r) return <Loading label="Starting the run…" />;
  return (
    <Alert color={statusColor[r.status]} title={`Run ${r.status}`}>
      <Group gap="xs">
        {!ended && <Loader size="xs" />}
        <Text size="sm">
          started {when(r.started_at)}
          {ended && ` · took ${duration(r.started_at, r.finished_at)}`} · added {r.added}, updated {r.updated}, unchanged {r.unchanged}, stale {r.stale}
        </Text>
      </Group>
      {Object.entries(r.errors).map(([source, error]) => (
        <Text key={source} size="sm" c="red">
          {source}: {error}
        </Text>
      ))}
    </Alert>
  );
}

export default function DiscoveryPage() {
  const [runId, setRunId] = useState<string | null>(null);
  const status = $api.useQuery('get', '/api/v1/cmdb/discovery/status', { params: { query: { per_source: 5, runs: 20 } } }, { refetchInterval: runId ? 2000 : 15_000 });
  const trigger = $api.useMutation('post', '/api/v1/cmdb/discovery/trigger', { onSuccess: (r) => setRunId(r.run_id) });
  const patch = $api.useMutation('patch', '/api/v1/cmdb/discovery/sources/{id}', { onSuccess: () => invalidatePaths('/api/v1/cmdb/discovery') });
  const remove = $api.useMutation('delete', '/api/v1/cmdb/discovery/sources/{id}', {
    onSuccess: async (_, vars) => {
      notifications.show({ message: `Source ${status.data?.sources.find((s) => s.id === vars.params.path.id)?.name ?? ''} deleted with its entities` });
      await invalidatePaths('/api/v1/cmdb');
    },
    // Refused (a run started since the page loaded, or configuration changed): show the page as it now is.
    onError: () => invalidatePaths('/api/v1/cmdb/discovery'),
  });
  // A run in progress may still write entities of the source: deleting waits until it has ended.
  const running = status.data?.running;
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Discovery</Title>
        <Button loading={trigger.isPending} onClick={() => trigger.mutate({})}>
          Run discovery now
        </Button>
      </Group>
      <ProblemAlert error={trigger.error ?? patch.error ?? remove.error ?? status.error} />
      {runId && <FollowRun id={runId} />}
      {running && (
        <Alert color="blue" variant="light" title="A discovery run is in progress">
          Started {when(running.started_at)} ({running.trigger}). Sources cannot be deleted until it has ended.
        </Alert>
      )}
      {status.isPending ? (
        <Loading />
      ) : !status.data ? null : (
        <>
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            {status.data.sources.map((s) => {
              const last = s.last_runs[0];
              return (
                <Card key={s.id} withBorder aria-label={`Source ${s.name}`}>
                  <Group justify="space-between" mb="xs">
                    <Text fw={600}>
                      {s.name} <Text span size="xs" c="dimmed">({s.kind})</Text>
                    </Text>
                    <Switch
                      label="Enabled"
                      checked={s.enabled}
                      onChange={(e) => patch.mutate({ params: { path: { id: s.id } }, body: { enabled: e.currentTarget.checked } })}
                      aria-label={`Enable source ${s.name}`}
                    />
                  </Group>
                  <Group justify="space-between" wrap="nowrap" gap="xs">
                    <Text size="xs" c="dimmed" truncate>
                      {s.address}
                    </Text>
                    {s.configured ? (
                      // Re-seeded from configuration at every run: it can only be disabled.
                      <Badge size="sm" variant="light" color="gray" title="Set by configuration: disable it instead of deleting it">
                        From configuration
                      </Badge>
                    ) : (
                      <ConfirmButton
                        size="compact-xs"
                        variant="subtle"
                        disabled={!!running}
                        question={`Delete the source ${s.name}? Its entities (with their relationships, recommendations and monitors) and its run records are deleted too. Manual entities stay.`}
                        confirmLabel="Delete source"
                        onConfirm={() => remove.mutate({ params: { path: { id: s.id } } })}
                        aria-label={`Delete source ${s.name}`}
                      >
                        Delete
                      </ConfirmButton>
                    )}
                  </Group>
                  {last ? (
                    <Stack gap={2} mt="xs">
                      <Group gap="xs">
                        <StatusBadge status={last.status} />
                        <Text size="sm">{when(last.finished_at)}</Text>
                        <Text size="sm" c="dimmed">
                          {duration(last.started_at, last.finished_at)}
                        </Text>
                      </Group>
                      <Text size="sm">
                        seen {last.seen} · added {last.added} · updated {last.updated} · unchanged {last.unchanged} · stale {last.stale}
                      </Text>
                      {last.error && (
                        <Text size="sm" c="red">
                          {last.error}
                        </Text>
                      )}
                    </Stack>
                  ) : (
                    <Text size="sm" c="dimmed" mt="xs">
                      Not run yet.
                    </Text>
                  )}
                </Card>
              );
            })}
          </SimpleGrid>
          <Card withBorder>
            <Text fw={600} mb="xs">
              Run history
            </Text>
            <DataTable
              label="Run history"
              empty="No runs yet."
              rows={status.data.runs}
              rowKey={(r) => r.id}
              hover={false}
              columns={[
                { header: 'Started', cell: (r) => when(r.started_at) },
                { header: 'Trigger', cell: (r) => r.trigger },
                { header: 'Status', cell: (r) => <StatusBadge status={r.status} /> },
                { header: 'Duration', cell: (r) => duration(r.started_at, r.finished_at) },
                { header: 'Added / updated / unchanged / stale', cell: (r) => `${r.added} / ${r.updated} / ${r.unchanged} / ${r.stale}` },
                {
                  header: 'Errors',
                  cell: (r) =>
                    Object.entries(r.errors)
                      .map(([s, e]) => `${s}: ${e}`)
                      .join('; '),
                },
              ]}
            />
          </Card>
        </>
      )}
    </Stack>
  );
}
