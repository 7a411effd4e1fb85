/** One case: its fields, the moves the signed-in person may make, assignment (staff), and the comment thread. */
import { Alert, Avatar, Button, Card, Group, Select, SimpleGrid, Stack, Text, Textarea, Title } from '@mantine/core';
import { IconArrowRight } from '@tabler/icons-react';
import { useState } from 'react';
import { useParams } from 'react-router';
import { $api, invalidatePaths, isProblem, type Schemas } from '../../api/client';
import { useMe } from '../../shared/auth';
import { ConfirmButton } from '../../shared/confirm';
import { when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { hasFieldErrors, ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { StatusBadge } from '../../shared/status-badge';
import { isNotFound, RecordNotFound } from '../not-found';
import { PriorityBadge, statusLabel, useStaff, type CaseStatus } from './CasesPage';

type CaseDetailData = Schemas['PortalCaseDetail'];
const refresh = () => invalidatePaths('/api/portal/cases');

/** What a move means to the person making it. */
const moveLabel: Record<CaseStatus, string> = {
  open: 'Reopen',
  in_progress: 'Start work (in progress)',
  waiting: 'Wait for requester',
  resolved: 'Mark resolved',
  closed: 'Close case',
};

/** The allowed moves a 409 names (the problem's `allowed_moves`). */
const allowedIn = (error: unknown): CaseStatus[] | undefined =>
  isProblem(error) && error.status === 409 ? ((error as { allowed_moves?: CaseStatus[] }).allowed_moves ?? []) : undefined;

function Moves({ c }: { c: CaseDetailData }) {
  const path = { params: { path: { case_id: c.case_id } } };
  const move = $api.useMutation('post', '/api/portal/cases/{case_id}/status', { onSettled: refresh });
  const conflict = allowedIn(move.error);
  return (
    <Stack gap={6}>
      <Group gap="xs">
        {c.allowed_moves.map((to) =>
          to === 'closed' ? (
            // Closing is final, so it asks first.
            <ConfirmButton
              key={to}
              size="xs"
              variant="default"
              question="Close this case? Closed cases cannot be reopened; a new problem needs a new case."
              confirmLabel="Close case"
              loading={move.isPending && move.variables?.body.status === to}
              onConfirm={() => move.mutate({ ...path, body: { status: to } })}
            >
              {moveLabel[to]}
            </ConfirmButton>
          ) : (
            <Button
              key={to}
              size="xs"
              variant="light"
              leftSection={<IconArrowRight size={14} />}
              loading={move.isPending && move.variables?.body.status === to}
              onClick={() => move.mutate({ ...path, body: { status: to } })}
            >
              {moveLabel[to]}
            </Button>
          ),
        )}
        {c.allowed_moves.length === 0 && (
          <Text size="sm" c="dimmed">
            {c.status === 'closed' ? 'Closed cases are final: open a new case for a new problem.' : 'No status moves are open to you.'}
          </Text>
        )}
      </Group>
      {move.error && (
        <Alert color="red" title={isProblem(move.error) ? move.error.title : 'Move failed'} role="alert">
          {isProblem(move.error) ? move.error.detail : String(move.error)}
          {conflict && (
            <Text size="sm" mt={4}>
              Allowed moves now: <b>{conflict.length ? conflict.map(statusLabel).join(', ') : 'none'}</b>
            </Text>
          )}
        </Alert>
      )}
    </Stack>
  );
}

function Assign({ c }: { c: CaseDetailData }) {
  const people = useStaff(true);
  const assign = $api.useMutation('post', '/api/portal/cases/{case_id}/assign', { onSuccess: refresh });
  const fieldError = useFieldErrors(assign.error);
  return (
    <Select
      label="Assignee"
      placeholder="unassigned"
      data={(people.data?.staff ?? []).map((p) => ({ value: p.user_id, label: p.display_name ?? p.email ?? p.user_id }))}
      value={c.assignee_id}
      onChange={(v) => assign.mutate({ params: { path: { case_id: c.case_id } }, body: { assignee_id: v } })}
      error={fieldError('body.assignee_id') ?? (assign.error && !fieldError('body.assignee_id') ? (isProblem(assign.error) ? assign.error.detail : 'Assignment failed') : undefined)}
      disabled={c.status === 'closed' || assign.isPending}
      clearable
      searchable
      w={{ base: '100%', sm: 260 }}
    />
  );
}

function Thread({ c, staff }: { c: CaseDetailData; staff: boolean }) {
  const [body, setBody] = useState('');
  const post = $api.useMutation('post', '/api/portal/cases/{case_id}/comments', {
    onSuccess: async () => {
      setBody('');
      await refresh();
    },
  });
  const fieldError = useFieldErrors(post.error);
  return (
    <Card withBorder>
      <Text fw={600} mb="sm">
        Comments ({c.comments.length})
      </Text>
      <Stack gap="sm" aria-label="Comments" role="list">
        {c.comments.length === 0 && (
          <Text size="sm" c="dimmed">
            No comments yet.
          </Text>
        )}
        {c.comments.map((m) => (
          <Group key={m.comment_id} align="start" wrap="nowrap" gap="sm" role="listitem">
            <Avatar size="sm" color={m.author_id === c.requester_id ? 'blue' : 'teal'} name={m.author_name ?? '?'} />
            <Stack gap={2} style={{ flex: 1, minWidth: 0 }}>
              <Group gap={6}>
                <Text size="sm" fw={600}>
                  {m.author_name ?? 'someone'}
                </Text>
                {m.author_id !== c.requester_id && (
                  <Text size="xs" c="teal">
                    support
                  </Text>
                )}
                <Text size="xs" c="dimmed">
                  {when(m.created_at)}
                </Text>
              </Group>
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
                {m.body}
              </Text>
            </Stack>
          </Group>
        ))}
      </Stack>
      {c.status !== 'closed' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            post.mutate({ params: { path: { case_id: c.case_id } }, body: { body } });
          }}
        >
          <Stack gap="xs" mt="md">
            {!hasFieldErrors(post.error) && <ProblemAlert error={post.error} />}
            <Textarea
              label="Add a comment"
              placeholder={staff ? 'Reply to the requester' : 'Anything to add for the support team?'}
              value={body}
              onChange={(e) => setBody(e.currentTarget.value)}
              error={fieldError('body.body')}
              autosize
              minRows={2}
            />
            <Group justify="flex-end">
              <Button type="submit" loading={post.isPending}>
                Add comment
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Card>
  );
}

export default function CaseDetail() {
  const { id = '' } = useParams();
  const me = useMe();
  const staff = me.roles.includes('staff');
  const found = $api.useQuery('get', '/api/portal/cases/{case_id}', { params: { path: { case_id: id } } });
  if (found.isPending) return <Loading />;
  if (isNotFound(found.error) || (isProblem(found.error) && found.error.status === 400)) return <RecordNotFound what="Case" back="/cases" backLabel="Cases" />;
  if (!found.data) return <ProblemAlert error={found.error} />;
  const c = found.data;
  return (
    <Stack gap="md">
      <BackLink to="/cases">Cases</BackLink>
      <Group gap="sm" align="center">
        <Title order={2} style={{ overflowWrap: 'anywhere' }}>
          {c.title}
        </Title>
        <StatusBadge status={c.status} size="lg">
          {statusLabel(c.status)}
        </StatusBadge>
        <PriorityBadge priority={c.priority} />
      </Group>
      <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="xs">
        <Text size="sm">
          <b>Requester</b> {c.requester_name ?? '—'}
        </Text>
        <Text size="sm">
          <b>Assignee</b> {c.assignee_name ?? 'unassigned'}
        </Text>
        <Text size="sm">
          <b>Opened</b> {when(c.created_at)}
        </Text>
        <Text size="sm">
          <b>Updated</b> {when(c.updated_at)}
        </Text>
        {c.resolved_at && (
          <Text size="sm">
            <b>Resolved</b> {when(c.resolved_at)}
          </Text>
        )}
        {c.closed_at && (
          <Text size="sm">
            <b>Closed</b> {when(c.closed_at)}
          </Text>
        )}
      </SimpleGrid>
      {c.description && (
        <Card withBorder>
          <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
            {c.description}
          </Text>
        </Card>
      )}
      <Card withBorder>
        <Stack gap="sm">
          <Text fw={600}>{staff ? 'Work on this case' : 'Status'}</Text>
          {staff && <Assign c={c} />}
          <Moves c={c} />
        </Stack>
      </Card>
      <Thread c={c} staff={staff} />
    </Stack>
  );
}
