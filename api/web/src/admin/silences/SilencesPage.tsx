/**
 * Silences: active, pending and expired ones with their matchers and time range; create one (also
 * prefilled from an alert, `?new=1&m=label=value…`) and end one early.
 */
import { Button, Group, Modal, MultiSelect, Select, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { $api, invalidatePaths, isProblem, type Schemas } from '../../api/client';
import { actorName, useMe } from '../../shared/auth';
import { ConfirmButton } from '../../shared/confirm';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { MatcherBadges, MatchersInput, type Matcher } from '../../shared/matchers';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';
import { useUrlState } from '../../shared/url-state';

const pageSize = 25;
const states = ['active', 'pending', 'expired'];
const refresh = () => invalidatePaths('/api/v1/alerts');

/** Durations offered for the end; "until" asks for an end time instead. */
const durations = [
  { value: '1h', label: '1 hour', ms: 3_600_000 },
  { value: '2h', label: '2 hours', ms: 7_200_000 },
  { value: '4h', label: '4 hours', ms: 14_400_000 },
  { value: '12h', label: '12 hours', ms: 43_200_000 },
  { value: '1d', label: '1 day', ms: 86_400_000 },
  { value: '7d', label: '7 days', ms: 604_800_000 },
  { value: 'until', label: 'until a time…', ms: 0 },
];

/** `label=value` (as the alert detail links here) into an equality matcher. */
export function matcherParam(m: string): Matcher {
  const at = m.indexOf('=');
  return at < 0 ? { label: m, op: '=', value: '' } : { label: m.slice(0, at), op: '=', value: m.slice(at + 1) };
}

/** The datetime-local value (local time, no zone) as an instant; empty stays empty. */
const localToIso = (v: string) => (v ? new Date(v).toISOString() : undefined);

function NewSilence({ initial, onClose }: { initial: Matcher[]; onClose: () => void }) {
  const me = useMe();
  const [matchers, setMatchers] = useState<Matcher[]>(initial.length ? initial : [{ label: 'alertname', op: '=', value: '' }]);
  const [start, setStart] = useState('');
  const [length, setLength] = useState('2h');
  const [end, setEnd] = useState('');
  const [author, setAuthor] = useState(actorName(me));
  const [comment, setComment] = useState('');
  const create = $api.useMutation('post', '/api/v1/alerts/silences', {
    onSuccess: async (s) => {
      notifications.show({ message: `Silence created, ${s.state} until ${when(s.ends_at)}` });
      await refresh();
      onClose();
    },
  });
  const fieldError = useFieldErrors(create.error);
  const ms = durations.find((d) => d.value === length)?.ms ?? 0;
  const endsAt = () => (length === 'until' ? localToIso(end) : new Date((start ? new Date(start).getTime() : Date.now()) + ms).toISOString());
  return (
    <Modal opened onClose={onClose} title="New silence" size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ body: { matchers, starts_at: localToIso(start), ends_at: endsAt() ?? '', created_by: author, comment } });
        }}
      >
        <Stack>
          <ProblemAlert error={create.error} />
          <MatchersInput value={matchers} onChange={setMatchers} fieldError={fieldError} emptyText="Add at least one matcher: a silence never covers every alert." />
          <Group align="start" grow>
            <TextInput label="Starts" description="empty: now" type="datetime-local" value={start} onChange={(e) => setStart(e.currentTarget.value)} error={fieldError('body.starts_at')} />
            <Select label="Duration" data={durations} value={length} onChange={(v) => setLength(v ?? '2h')} allowDeselect={false} />
            {length === 'until' && <TextInput label="Ends" type="datetime-local" value={end} onChange={(e) => setEnd(e.currentTarget.value)} error={fieldError('body.ends_at')} required />}
          </Group>
          {length !== 'until' && fieldError('body.ends_at') && (
            <Text size="sm" c="red">
              End: {fieldError('body.ends_at')}
            </Text>
          )}
          <TextInput label="Author" value={author} onChange={(e) => setAuthor(e.currentTarget.value)} error={fieldError('body.created_by')} />
          <Textarea label="Comment" description="why, and a ticket or change if there is one" value={comment} onChange={(e) => setComment(e.currentTarget.value)} error={fieldError('body.comment')} autosize minRows={2} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create silence
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** One end of the time range: a small dimmed word, then the time. */
function Stamp({ label, at }: { label: string; at: string }) {
  return (
    <Text size="sm">
      <Text span size="xs" c="dimmed">
        {label}{' '}
      </Text>
      {when(at)}
    </Text>
  );
}

/** Ends a silence now (its row's one action). */
function EndSilence({ s }: { s: Schemas['Silence'] }) {
  const me = useMe();
  const expire = $api.useMutation('post', '/api/v1/alerts/silences/{id}/expire', {
    onSuccess: async () => {
      notifications.show({ message: 'Silence ended; alerts it covered are automated again if they still fire' });
      await refresh();
    },
    onError: (error) => notifications.show({ color: 'red', title: 'Could not end the silence', message: isProblem(error) ? error.detail : String(error) }),
  });
  if (s.state === 'expired') return null;
  return (
    <ConfirmButton
      size="compact-xs"
      variant="light"
      question="End this silence now? Alerts it covers that still fire open incidents and run runbooks from the next tick (within 30 s)."
      confirmLabel="End silence"
      loading={expire.isPending}
      onConfirm={() => expire.mutate({ params: { path: { id: s.id } }, body: { by: actorName(me) } })}
      aria-label={`End silence ${s.id}`}
    >
      End now
    </ConfirmButton>
  );
}

export default function SilencesPage() {
  const { values: f, set, page, setPage } = useUrlState(['state'] as const);
  const [params, setParams] = useSearchParams();
  const creating = params.has('new');
  const closeForm = () => {
    const next = new URLSearchParams(params);
    next.delete('new');
    next.delete('m');
    setParams(next, { replace: true });
  };
  const state = f.state || 'active,pending';
  const silences = $api.useQuery('get', '/api/v1/alerts/silences', { params: { query: { limit: pageSize, offset: (page - 1) * pageSize, state } } }, { refetchInterval: 30_000 });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Silences</Title>
        <Button onClick={() => setParams({ ...Object.fromEntries(params), new: '1' }, { replace: true })}>New silence</Button>
      </Group>
      <Text size="sm" c="dimmed">
        A silenced alert is still recorded and listed, but opens no incident and runs no runbook while the silence is active.
      </Text>
      <DataTable
        label="Silences"
        filters={<MultiSelect label="State" data={states} value={state.split(',')} onChange={(v) => set({ state: v.join(',') })} w={320} />}
        error={silences.error}
        pending={silences.isPending}
        empty="No silences in these states."
        rows={silences.data?.items ?? []}
        rowKey={(s) => s.id}
        minWidth={820}
        hover={false}
        columns={[
          { header: 'State', cell: (s) => <StatusBadge status={s.state} /> },
          { header: 'Matchers', cell: (s) => <MatcherBadges matchers={s.matchers} /> },
          {
            header: 'Time range',
            nowrap: true,
            cell: (s) => (
              <>
                <Stamp label="from" at={s.starts_at} />
                <Stamp label="until" at={s.ends_at} />
              </>
            ),
          },
          {
            header: 'Author',
            nowrap: true,
            cell: (s) => (
              <>
                {s.created_by}
                {s.ended_by && (
                  <Text size="xs" c="dimmed">
                    ended by {s.ended_by}
                  </Text>
                )}
              </>
            ),
          },
          {
            header: 'Comment',
            cell: (s) => (
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                {s.comment}
              </Text>
            ),
          },
          { header: '', cell: (s) => <EndSilence s={s} /> },
        ]}
        paging={silences.data && { total: silences.data.total, pageSize, page, onPage: setPage }}
      />
      {creating && <NewSilence initial={params.getAll('m').map(matcherParam)} onClose={closeForm} />}
    </Stack>
  );
}
