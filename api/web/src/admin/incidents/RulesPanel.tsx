/** Incident rules: the matchers that open incidents from alerts; create, enable/disable, delete. */
import { Button, Group, Modal, NumberInput, Stack, Switch, Text, TagsInput, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState } from 'react';
import { $api, invalidatePaths } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { MatcherBadges, MatchersInput, type Matcher } from '../../shared/matchers';
import { DataTable } from '../../shared/data-table';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

function RuleForm({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [name, setName] = useState('');
  const [matchers, setMatchers] = useState<Matcher[]>([]);
  const [severities, setSeverities] = useState<string[]>([]);
  const [groupBy, setGroupBy] = useState<string[]>(['alertname']);
  const [position, setPosition] = useState<number>(100);
  const create = $api.useMutation('post', '/api/v1/incidents/rules', {
    onSuccess: async () => {
      await invalidatePaths('/api/v1/incidents/rules');
      onClose();
    },
  });
  const fieldError = useFieldErrors(create.error);
  return (
    <Modal opened={opened} onClose={onClose} title="New incident rule" size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ body: { name, matchers, severities, group_by: groupBy, position, enabled: true } });
        }}
      >
        <Stack>
          <ProblemAlert error={create.error} />
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} />
          <MatchersInput value={matchers} onChange={setMatchers} fieldError={fieldError} />
          <TagsInput label="Severities (empty: any)" value={severities} onChange={setSeverities} error={fieldError('body.severities')} />
          <TagsInput label="Group by labels" value={groupBy} onChange={setGroupBy} error={fieldError('body.group_by')} />
          <NumberInput label="Position (lower runs first)" value={position} onChange={(v) => setPosition(Number(v) || 0)} error={fieldError('body.position')} />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending}>
              Create rule
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

export function RulesPanel() {
  const [opened, { open, close }] = useDisclosure(false);
  const rules = $api.useQuery('get', '/api/v1/incidents/rules', { params: { query: { limit: 200 } } });
  const patch = $api.useMutation('patch', '/api/v1/incidents/rules/{id}', { onSuccess: () => invalidatePaths('/api/v1/incidents/rules') });
  const remove = $api.useMutation('delete', '/api/v1/incidents/rules/{id}', { onSuccess: () => invalidatePaths('/api/v1/incidents/rules') });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Text c="dimmed" size="sm">
          The first enabled rule (by position) matching a firing alert opens or joins an incident.
        </Text>
        <Button onClick={open}>New rule</Button>
      </Group>
      <RuleForm opened={opened} onClose={close} />
      <DataTable
        label="Incident rules"
        error={rules.error ?? patch.error ?? remove.error}
        pending={rules.isPending}
        empty="No incident rules yet."
        rows={rules.data?.items ?? []}
        rowKey={(r) => r.id}
        hover={false}
        columns={[
          { header: 'Position', cell: (r) => r.position },
          { header: 'Name', cell: (r) => r.name },
          { header: 'Matchers', cell: (r) => <MatcherBadges matchers={r.matchers} /> },
          { header: 'Severities', cell: (r) => (r.severities.length ? r.severities.join(', ') : 'any') },
          { header: 'Group by', cell: (r) => r.group_by.join(', ') },
          {
            header: 'Enabled',
            cell: (r) => (
              <Switch aria-label={`Enable rule ${r.name}`} checked={r.enabled} onChange={(e) => patch.mutate({ params: { path: { id: r.id } }, body: { enabled: e.currentTarget.checked } })} />
            ),
          },
          {
            header: '',
            cell: (r) => (
              <ConfirmButton size="compact-xs" variant="subtle" question={`Delete the rule "${r.name}"?`} confirmLabel="Delete" onConfirm={() => remove.mutate({ params: { path: { id: r.id } } })}>
                Delete
              </ConfirmButton>
            ),
          },
        ]}
      />
    </Stack>
  );
}
