/** Support cases: requesters see the cases they opened, staff every case; filters live in the URL; a new case opens in a dialog. */
import { Button, Group, Modal, MultiSelect, SegmentedControl, Select, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { useMe } from '../../shared/auth';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { hasFieldErrors, ProblemAlert, useFieldErrors } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';
import { opt, useUrlState } from '../../shared/url-state';

export type CaseStatus = Schemas['PortalCase']['status'];
export type CasePriority = Schemas['PortalCase']['priority'];
// Records over the API's enums: a status or priority the API adds breaks the type check here.
const statusNames: Record<CaseStatus, string> = { open: 'open', in_progress: 'in progress', waiting: 'waiting', resolved: 'resolved', closed: 'closed' };
const priorityColor: Record<CasePriority, string> = { P1: 'red', P2: 'orange', P3: 'blue', P4: 'gray' };
const caseStatuses = Object.keys(statusNames) as CaseStatus[];
const casePriorities = Object.keys(priorityColor) as CasePriority[];
const pageSize = 25;

export const statusLabel = (s: CaseStatus) => statusNames[s];
export const PriorityBadge = ({ priority }: { priority: CasePriority }) => <StatusBadge status={priority} color={priorityColor[priority]} variant="outline" />;

/** The staff members a case can be assigned to (staff only: the route refuses others). */
export function useStaff(enabled: boolean) {
  return $api.useQuery('get', '/api/portal/staff', {}, { enabled, staleTime: 60_000 });
}

function NewCase({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [priority, setPriority] = useState<CasePriority>('P3');
  const create = $api.useMutation('post', '/api/portal/cases', {
    onSuccess: async (c) => {
      await invalidatePaths('/api/portal/cases');
      onClose();
      navigate(`/cases/${c.case_id}`);
    },
  });
  const fieldError = useFieldErrors(create.error);
  return (
    <Modal opened={opened} onClose={onClose} title="Open a support case">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ body: { title, description, priority } });
        }}
      >
        <Stack>
          {!hasFieldErrors(create.error) && <ProblemAlert error={create.error} />}
          <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} error={fieldError('body.title')} data-autofocus />
          <Textarea label="Description" description="What happened, what you expected, and since when" value={description} onChange={(e) => setDescription(e.currentTarget.value)} autosize minRows={4} error={fieldError('body.description')} />
          <Stack gap={4}>
            <Text size="sm" fw={500} id="new-case-priority">
              Priority
            </Text>
            <SegmentedControl aria-labelledby="new-case-priority" data={[...casePriorities]} value={priority} onChange={(v) => setPriority(v as CasePriority)} />
            <Text size="xs" c={fieldError('body.priority') ? 'red' : 'dimmed'}>
              {fieldError('body.priority') ?? 'P1: service down for you · P4: a question, no hurry'}
            </Text>
          </Stack>
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending}>
              Open case
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

export default function CasesPage() {
  const me = useMe();
  const staff = me.roles.includes('staff');
  const { values: f, set, page, setPage } = useUrlState(['status', 'priority', 'q', 'assignee'] as const);
  const [opened, { open, close }] = useDisclosure(false);
  const people = useStaff(staff);
  const cases = $api.useQuery('get', '/api/portal/cases', {
    params: {
      query: {
        status: opt(f.status),
        priority: opt(f.priority) as CasePriority | undefined,
        q: opt(f.q),
        assignee_id: staff ? opt(f.assignee) : undefined,
      },
    },
  });
  const all = cases.data?.cases ?? [];
  const shown = all.slice((page - 1) * pageSize, page * pageSize);
  const filtered = Boolean(f.status || f.priority || f.q || f.assignee);
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Support cases</Title>
        <Button onClick={open}>New case</Button>
      </Group>
      <Text c="dimmed" size="sm">
        {staff ? 'As staff you see and work every case.' : 'The cases you opened. Our support team answers here.'}
      </Text>
      <NewCase opened={opened} onClose={close} />
      <DataTable
        label="Cases"
        filters={
          <>
            <MultiSelect
              label="Status"
              data={caseStatuses.map((s) => ({ value: s, label: statusLabel(s) }))}
              value={f.status ? f.status.split(',') : []}
              onChange={(v) => set({ status: v.join(',') })}
              placeholder={f.status ? undefined : 'any status'}
              w={{ base: '100%', xs: 260 }}
              clearable
            />
            <Select label="Priority" placeholder="any" data={[...casePriorities]} value={f.priority || null} onChange={(v) => set({ priority: v ?? '' })} w={110} clearable />
            {staff && (
              <Select
                label="Assignee"
                data={(people.data?.staff ?? []).map((p) => ({ value: p.user_id, label: p.display_name ?? p.email ?? p.user_id }))}
                placeholder="anyone"
                value={f.assignee || null}
                onChange={(v) => set({ assignee: v ?? '' })}
                w={190}
                clearable
                searchable
              />
            )}
            <SearchInput value={f.q} onSearch={(q) => set({ q })} label="Text" placeholder="Words in title or description" w={240} />
          </>
        }
        error={cases.error}
        pending={cases.isPending}
        empty={filtered ? 'No cases match these filters.' : 'No cases yet. Open one when you need help.'}
        rows={shown}
        rowKey={(c) => c.case_id}
        minWidth={staff ? 860 : 640}
        columns={[
          { header: 'Title', cell: (c) => <Link to={`/cases/${c.case_id}`}>{c.title}</Link> },
          { header: 'Status', cell: (c) => <StatusBadge status={c.status}>{statusLabel(c.status)}</StatusBadge> },
          { header: 'Priority', cell: (c) => <PriorityBadge priority={c.priority} /> },
          staff && { header: 'Requester', cell: (c) => c.requester_name ?? '—' },
          { header: 'Assignee', cell: (c) => c.assignee_name ?? <Text span c="dimmed" size="sm">unassigned</Text> },
          { header: 'Comments', cell: (c) => c.comment_count },
          { header: 'Opened', cell: (c) => when(c.created_at) },
          { header: 'Updated', cell: (c) => when(c.updated_at) },
        ]}
        // Phones: one card per case, the title first.
        card={(c) => (
          <>
            <Link to={`/cases/${c.case_id}`}>{c.title}</Link>
            <Group gap={6} mt={6}>
              <StatusBadge status={c.status}>{statusLabel(c.status)}</StatusBadge>
              <PriorityBadge priority={c.priority} />
              <Text size="xs" c="dimmed">
                {c.comment_count} comment{c.comment_count === 1 ? '' : 's'}
              </Text>
            </Group>
            <Text size="xs" c="dimmed" mt={4}>
              {staff && `${c.requester_name ?? '—'} · `}
              {c.assignee_name ?? 'unassigned'} · updated {when(c.updated_at)}
            </Text>
          </>
        )}
        paging={all.length > 0 ? { total: all.length, pageSize, page, onPage: setPage } : undefined}
      />
    </Stack>
  );
}
