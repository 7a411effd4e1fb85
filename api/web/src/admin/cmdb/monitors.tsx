/** Entity monitors wherever they are listed: deploy all, enable/disable and remove one. */
import { Alert, Button, Code, Group, Stack, Switch, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import type { ReactNode } from 'react';
import { $api, invalidatePaths, isProblem, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { DataTable } from '../../shared/data-table';
import { when } from '../../shared/format';
import { ProblemAlert } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';

type Monitor = Schemas['EntityMonitor'];
const refresh = () => invalidatePaths('/api/v1/cmdb');
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * A screen's header with the deploy-all button (beside `actions`); the outcome, stale monitors taken
 * out included, shows under the header at full width.
 */
export function DeployHeader({ title, actions }: { title: ReactNode; actions?: ReactNode }) {
  const deploy = $api.useMutation('post', '/api/v1/cmdb/monitors/deploy-all', { onSuccess: refresh });
  const d = deploy.data;
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="start">
        {title}
        <Group gap="sm">
          {actions}
          <Button variant="light" loading={deploy.isPending} onClick={() => deploy.mutate({})}>
            Deploy all monitors
          </Button>
        </Group>
      </Group>
      {d && (
        <Alert color="green" title="Deployed" withCloseButton onClose={() => deploy.reset()}>
          {plural(d.deployed, 'monitor')} deployed; {d.total} in {d.rule_file}
          {d.checker ? ` (checked by ${d.checker})` : ''}. {plural(d.removed_stale, 'monitor')} of stale entities taken out; {plural(d.removed, 'rule')} left the rule file.
        </Alert>
      )}
      {deploy.error && <ProblemAlert error={deploy.error} />}
    </Stack>
  );
}

/** A monitor's switch and remove button (each row its own mutations). */
function MonitorActions({ m }: { m: Monitor }) {
  const failed = (error: unknown) => notifications.show({ color: 'red', title: 'The monitor did not change', message: isProblem(error) ? error.detail : String(error) });
  const patch = $api.useMutation('patch', '/api/v1/cmdb/monitors/{id}', { onSuccess: refresh, onError: failed });
  const remove = $api.useMutation('delete', '/api/v1/cmdb/monitors/{id}', {
    onSuccess: async () => {
      notifications.show({ message: `Monitor ${m.alert} removed; its recommendation can be applied again` });
      await refresh();
    },
    onError: failed,
  });
  const path = { params: { path: { id: m.id } } };
  return (
    <Group gap="sm" wrap="nowrap">
      <Switch
        size="xs"
        label="Enabled"
        checked={m.status !== 'disabled'}
        disabled={patch.isPending}
        onChange={(e) => patch.mutate({ ...path, body: { enabled: e.currentTarget.checked } })}
        aria-label={`Enable monitor ${m.alert}`}
      />
      <ConfirmButton
        size="compact-xs"
        variant="subtle"
        question={`Remove the monitor ${m.alert}? A deployed rule leaves the rule file at the next deploy; its recommendation goes back to proposed.`}
        confirmLabel="Remove"
        loading={remove.isPending}
        onConfirm={() => remove.mutate(path)}
        aria-label={`Remove monitor ${m.alert}`}
      >
        Remove
      </ConfirmButton>
    </Group>
  );
}

/** Monitors as a table; `entityCell` adds a first column naming the entity (the all-monitors screen). */
export function MonitorsTable({ monitors, entityCell, pending = false, error, empty = 'No monitors.' }: { monitors: Monitor[]; entityCell?: (m: Monitor) => ReactNode; pending?: boolean; error?: unknown; empty?: ReactNode }) {
  return (
    <DataTable
      label="Monitors"
      pending={pending}
      error={error}
      empty={empty}
      rows={monitors}
      rowKey={(m) => m.id}
      minWidth={640}
      hover={false}
      columns={[
        entityCell !== undefined && { header: 'Entity', cell: entityCell },
        {
          header: 'Alert',
          cell: (m) => (
            <>
              <b>{m.alert}</b>
              <Text size="xs" c="dimmed" lineClamp={2}>
                <Code>{m.rule.expr}</Code>
              </Text>
            </>
          ),
        },
        { header: 'Status', cell: (m) => <StatusBadge status={m.status} /> },
        {
          header: 'Deployment',
          cell: (m) => (
            <>
              {m.deployed_at ? `deployed ${when(m.deployed_at)}` : ''}
              {m.last_error && (
                <Text size="xs" c="red">
                  {m.last_error}
                </Text>
              )}
            </>
          ),
        },
        { header: '', cell: (m) => <MonitorActions m={m} /> },
      ]}
    />
  );
}
