/** Incidents: a filtered list, opening one by hand, and the incident rules. */
import { Button, Group, Modal, MultiSelect, Select, Stack, Tabs, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { $api, invalidatePaths } from '../../api/client';
import { when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { DataTable } from '../../shared/data-table';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { opt, useUrlState } from '../../shared/url-state';
import { RulesPanel } from './RulesPanel';

const pageSize = 25;

function CreateIncident({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [severity, setSeverity] = useState('warning');
  const create = $api.useMutation('post', '/api/v1/incidents', {
    onSuccess: async (incident) => {
      await invalidatePaths('/api/v1/incidents');
      onClose();
      navigate(`/admin/incidents/${incident.id}`);
    },
  });
  const fieldError = useFieldErrors(create.error);
  return (
    <Modal opened={opened} onClose={onClose} title="Open an incident">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ body: { title, description, severity } });
        }}
      >
        <Stack>
          <ProblemAlert error={create.error} />
          <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} error={fieldError('body.title')} />
          <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} autosize minRows={3} error={fieldError('body.description')} />
          <Select label="Severity" data={['critical', 'warning', 'info']} value={severity} onChange={(v) => setSeverity(v ?? 'warning')} allowDeselect={false} />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending}>
              Open incident
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function IncidentList() {
  const { values: f, set, page, setPage } = useUrlState(['status', 'severity', 'origin', 'label'] as const);
  const [opened, { open, close }] = useDisclosure(false);
  const incidents = $api.useQuery('get', '/api/v1/incidents', {
    params: {
      query: {
        limit: pageSize,
        offset: (page - 1) * pageSize,
        status: opt(f.status),
        severity: opt(f.severity),
        source: opt(f.origin) as 'manual' | 'alert' | undefined,
        label: opt(f.label),
      },
    },
  });
  return (
    <Stack gap="sm">
      <DataTable
        label="Incidents"
        filters={
          <>
            <MultiSelect label="Status" data={['open', 'acknowledged', 'resolved', 'closed']} value={f.status ? f.status.split(',') : []} onChange={(v) => set({ status: v.join(',') })} w={240} clearable />
            <MultiSelect label="Severity" data={['critical', 'warning', 'info']} value={f.severity ? f.severity.split(',') : []} onChange={(v) => set({ severity: v.join(',') })} w={200} clearable />
            <Select label="Origin" placeholder="any" data={['manual', 'alert']} value={f.origin || null} onChange={(v) => set({ origin: v ?? '' })} w={130} clearable />
            <TextInput label="Label" placeholder="name=value" defaultValue={f.label} onBlur={(e) => set({ label: e.currentTarget.value.trim() })} w={160} />
            <Button onClick={open} ml="auto">
              Open an incident
            </Button>
          </>
        }
        error={incidents.error}
        pending={incidents.isPending}
        empty="No incidents match these filters."
        rows={incidents.data?.items ?? []}
        rowKey={(i) => i.id}
        columns={[
          { header: 'Title', cell: (i) => <Link to={`/admin/incidents/${i.id}`}>{i.title}</Link> },
          { header: 'Status', cell: (i) => <StatusBadge status={i.status} /> },
          { header: 'Severity', cell: (i) => i.severity },
          { header: 'Assignee', cell: (i) => i.assignee ?? <Text span c="dimmed">—</Text> },
          { header: 'Origin', cell: (i) => i.origin },
          { header: 'Alerts', cell: (i) => i.alert_count },
          { header: 'Opened', cell: (i) => when(i.created_at) },
        ]}
        paging={incidents.data && { total: incidents.data.total, pageSize, page, onPage: setPage }}
      />
      <CreateIncident opened={opened} onClose={close} />
    </Stack>
  );
}

export default function IncidentsPage() {
  const [params, setParams] = useSearchParams();
  const tab = params.get('tab') === 'rules' ? 'rules' : 'incidents';
  return (
    <Stack gap="sm">
      <Title order={2}>Incidents</Title>
      <Tabs value={tab} onChange={(t) => setParams(t === 'rules' ? { tab: 'rules' } : {})}>
        <Tabs.List>
          <Tabs.Tab value="incidents">Incidents</Tabs.Tab>
          <Tabs.Tab value="rules">Incident rules</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="incidents" pt="sm">
          {tab === 'incidents' && <IncidentList />}
        </Tabs.Panel>
        <Tabs.Panel value="rules" pt="sm">
          {tab === 'rules' && <RulesPanel />}
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
