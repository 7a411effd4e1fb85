/** One incident: status moves (reopen too), edits of title/severity/assignee, escalation, its alerts, the tracker issue, the timeline and comments. */
import { Anchor, Autocomplete, Badge, Button, Card, Group, Modal, SimpleGrid, Stack, Table, Text, TextInput, Textarea, Timeline, Title } from '@mantine/core';
import { IconExternalLink } from '@tabler/icons-react';
import { useDisclosure } from '@mantine/hooks';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { actorName, useMe } from '../../shared/auth';
import { ConfirmButton } from '../../shared/confirm';
import { statusColor, when } from '../../shared/format';
import { StatusBadge } from '../../shared/status-badge';
import { BackLink } from '../../shared/layout';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';

const refresh = () => invalidatePaths('/api/v1/incidents', '/api/v1/alerts');

function Escalate({ id }: { id: string }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [reason, setReason] = useState('');
  const escalate = $api.useMutation('post', '/api/v1/incidents/{id}/escalate', {
    onSuccess: async () => {
      await refresh();
      close();
    },
  });
  const fieldError = useFieldErrors(escalate.error);
  return (
    <>
      <Button color="orange" onClick={open}>
        Escalate
      </Button>
      <Modal opened={opened} onClose={close} title="Escalate to a human">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            escalate.mutate({ params: { path: { id } }, body: { reason } });
          }}
        >
          <Stack>
            <ProblemAlert error={escalate.error} />
            <Textarea label="Reason" value={reason} onChange={(e) => setReason(e.currentTarget.value)} error={fieldError('body.reason')} autosize minRows={2} />
            <Group justify="flex-end">
              <Button type="submit" color="orange" loading={escalate.isPending}>
                Send escalation
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

const severities = ['critical', 'warning', 'info'];

/** Title, severity and assignee; only changed fields are sent (each is an `updated` timeline entry). */
function EditIncident({ incident, onClose }: { incident: Schemas['Incident']; onClose: () => void }) {
  const me = useMe();
  const [title, setTitle] = useState(incident.title);
  const [severity, setSeverity] = useState(incident.severity);
  const [assignee, setAssignee] = useState(incident.assignee ?? '');
  const patch = $api.useMutation('patch', '/api/v1/incidents/{id}', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  const fieldError = useFieldErrors(patch.error);
  const changes = {
    ...(title !== incident.title && { title }),
    ...(severity !== incident.severity && { severity }),
    ...(assignee.trim() !== (incident.assignee ?? '') && { assignee: assignee.trim() || null }),
  };
  return (
    <Modal opened onClose={onClose} title="Edit incident">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!Object.keys(changes).length) return onClose();
          patch.mutate({ params: { path: { id: incident.id } }, body: { ...changes, by: actorName(me) } });
        }}
      >
        <Stack>
          <ProblemAlert error={patch.error} />
          <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} error={fieldError('body.title')} />
          <Autocomplete label="Severity" data={severities} value={severity} onChange={setSeverity} error={fieldError('body.severity')} />
          <TextInput
            label="Assignee"
            description="who handles it (e.g. an email); empty: unassigned"
            value={assignee}
            onChange={(e) => setAssignee(e.currentTarget.value)}
            error={fieldError('body.assignee')}
            rightSection={
              <Button size="compact-xs" variant="subtle" onClick={() => setAssignee(me.email ?? actorName(me))}>
                Me
              </Button>
            }
            rightSectionWidth={48}
          />
          <Text size="xs" c="dimmed">
            The tracker issue keeps its original title.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={patch.isPending}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

export default function IncidentDetail() {
  const { id = '' } = useParams();
  const path = { params: { path: { id } } };
  const incident = $api.useQuery('get', '/api/v1/incidents/{id}', path);
  const alerts = $api.useQuery('get', '/api/v1/incidents/{id}/alerts', { params: { path: { id }, query: { limit: 200 } } });
  const timeline = $api.useQuery('get', '/api/v1/incidents/{id}/timeline', { params: { path: { id }, query: { limit: 500 } } });
  const ack = $api.useMutation('post', '/api/v1/incidents/{id}/acknowledge', { onSuccess: refresh });
  const resolve = $api.useMutation('post', '/api/v1/incidents/{id}/resolve', { onSuccess: refresh });
  const closeIt = $api.useMutation('post', '/api/v1/incidents/{id}/close', { onSuccess: refresh });
  const reopen = $api.useMutation('post', '/api/v1/incidents/{id}/reopen', { onSuccess: refresh });
  const [editing, setEditing] = useState(false);
  const [comment, setComment] = useState('');
  const post = $api.useMutation('post', '/api/v1/incidents/{id}/timeline', {
    onSuccess: async () => {
      setComment('');
      await refresh();
    },
  });
  const commentError = useFieldErrors(post.error);
  if (incident.isPending) return <Loading />;
  if (!incident.data) return <ProblemAlert error={incident.error} />;
  const i = incident.data;
  const body = {};
  return (
    <Stack gap="md">
      <BackLink to="/admin/incidents">Incidents</BackLink>
      <Group justify="space-between" align="start">
        <Group gap="sm">
          <Title order={2}>{i.title}</Title>
          <Badge color={statusColor[i.status]}>{i.status}</Badge>
          <Badge variant="outline">{i.severity}</Badge>
        </Group>
        <Group gap="sm">
          {i.status === 'open' && (
            <Button loading={ack.isPending} onClick={() => ack.mutate({ ...path, body })}>
              Acknowledge
            </Button>
          )}
          {(i.status === 'open' || i.status === 'acknowledged') && (
            <ConfirmButton color="green" question="Resolve this incident?" confirmLabel="Resolve" onConfirm={() => resolve.mutate({ ...path, body })}>
              Resolve
            </ConfirmButton>
          )}
          {i.status !== 'closed' && (
            <ConfirmButton color="gray" question="Close this incident? Closed incidents take no more alerts." confirmLabel="Close" onConfirm={() => closeIt.mutate({ ...path, body })}>
              Close
            </ConfirmButton>
          )}
          {(i.status === 'resolved' || i.status === 'closed') && (
            <ConfirmButton
              color="blue"
              question={`Reopen this incident?${i.issue.web_url ? ' Its tracker issue is reopened too.' : ''}`}
              confirmLabel="Reopen"
              onConfirm={() => reopen.mutate({ ...path, body })}
            >
              Reopen
            </ConfirmButton>
          )}
          <Button variant="default" onClick={() => setEditing(true)}>
            Edit
          </Button>
          <Escalate id={id} />
        </Group>
      </Group>
      <ProblemAlert error={ack.error ?? resolve.error ?? closeIt.error ?? reopen.error} />
      {editing && <EditIncident incident={i} onClose={() => setEditing(false)} />}
      {i.description && <Text style={{ whiteSpace: 'pre-wrap' }}>{i.description}</Text>}
      <SimpleGrid cols={{ base: 1, sm: 5 }}>
        <Text>
          <b>Origin</b> {i.origin}
        </Text>
        <Text>
          <b>Assignee</b> {i.assignee ?? <Text span c="dimmed">unassigned</Text>}
        </Text>
        <Text>
          <b>Opened</b> {when(i.created_at)} by {i.created_by}
        </Text>
        <Text>
          <b>Escalated</b> {when(i.escalated_at)}
        </Text>
        <Text>
          <b>Tracker issue</b>{' '}
          {i.issue.web_url ? (
            <Anchor href={i.issue.web_url} target="_blank" rel="noreferrer" aria-label="Tracker issue">
              #{i.issue.iid} <IconExternalLink size={12} />
            </Anchor>
          ) : (
            <span title={i.issue.error ?? undefined}>{i.issue.status}</span>
          )}
        </Text>
      </SimpleGrid>
      <Card withBorder>
        <Text fw={600} mb="xs">
          Alerts ({alerts.data?.total ?? 0})
        </Text>
        <Table.ScrollContainer minWidth={500}>
          <Table aria-label="Incident alerts">
            <Table.Tbody>
              {(alerts.data?.items ?? []).map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>
                    <Link to={`/admin/alerts/${a.id}`}>{a.alertname}</Link>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={a.status} />
                  </Table.Td>
                  <Table.Td>{a.severity}</Table.Td>
                  <Table.Td>{when(a.last_received_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>
      <Card withBorder>
        <Text fw={600} mb="sm">
          Timeline
        </Text>
        <Timeline bulletSize={14} lineWidth={2} aria-label="Timeline">
          {(timeline.data?.items ?? []).map((t) => (
            <Timeline.Item key={t.id} title={`${t.kind.replace('_', ' ')} · ${t.actor}`}>
              <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                {t.message}
              </Text>
              <Text size="xs" c="dimmed">
                {when(t.at)}
              </Text>
            </Timeline.Item>
          ))}
        </Timeline>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            post.mutate({ ...path, body: { kind: 'comment', message: comment } });
          }}
        >
          <Group align="end" mt="md">
            <Textarea label="Comment" value={comment} onChange={(e) => setComment(e.currentTarget.value)} error={commentError('body.message')} style={{ flex: 1 }} autosize minRows={1} />
            <Button type="submit" loading={post.isPending}>
              Add comment
            </Button>
          </Group>
        </form>
      </Card>
    </Stack>
  );
}
