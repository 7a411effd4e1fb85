/** One lead: its fields (edit every one), the status moves its lifecycle allows, conversion, and its history with resubmissions. */
import { Anchor, Badge, Button, Card, Code, Group, Modal, NumberInput, SimpleGrid, Stack, Switch, Text, TextInput, Timeline, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { estimate, estimateAmount, leadStatusColor, moveLabel, money } from './format';
import { LeadForm } from './LeadForm';

type Lead = Schemas['Lead'];
type Status = Lead['status'];

/** The conversion dialog: the opportunity's name, amount and close date, and whether to create (or link) the company's account. */
function ConvertDialog({ lead, onClose }: { lead: Lead; onClose: () => void }) {
  const fullName = `${lead.first_name} ${lead.last_name}`;
  const [name, setName] = useState(lead.company ? `${lead.company} – ${fullName}` : fullName);
  const [amount, setAmount] = useState<number | string>(estimateAmount(lead.estimated_value) ?? '');
  const [closeDate, setCloseDate] = useState('');
  const [createAccount, setCreateAccount] = useState(Boolean(lead.company));
  const convert = $api.useMutation('post', '/api/v1/leads/{lead_id}/convert', {
    onSuccess: async () => {
      await invalidatePaths('/api/v1/leads', '/api/v1/opportunities', '/api/v1/accounts', '/api/v1/pipelines');
      onClose();
    },
  });
  const fieldError = useFieldErrors(convert.error);
  return (
    <Modal opened onClose={onClose} title={`Convert ${fullName} into an opportunity`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          convert.mutate({
            params: { path: { lead_id: lead.id } },
            body: { opportunity_name: name, ...(amount !== '' && { amount: Number(amount) }), ...(closeDate && { close_date: closeDate }), create_account: createAccount },
          });
        }}
      >
        <Stack>
          <ProblemAlert error={convert.error} />
          <TextInput label="Opportunity name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.opportunity_name')} />
          <NumberInput label="Amount" value={amount} onChange={setAmount} min={0} thousandSeparator="," prefix="$" error={fieldError('body.amount')} />
          <TextInput label="Expected close date" type="date" value={closeDate} onChange={(e) => setCloseDate(e.currentTarget.value)} error={fieldError('body.close_date')} />
          <Switch
            label={lead.company ? `Create or link the account "${lead.company}"` : 'Create an account (the lead has no company)'}
            checked={createAccount}
            disabled={!lead.company}
            onChange={(e) => setCreateAccount(e.currentTarget.checked)}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color="green" loading={convert.isPending}>
              Convert lead
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {children || '—'}
      </Text>
    </div>
  );
}

function entryTitle(h: Schemas['HistoryEntry']): string {
  if (h.field === 'created') return `Created from ${String(h.detail?.source ?? 'no source')} · ${h.actor}`;
  if (h.field === 'resubmission') return `Submitted again from ${h.to} · ${h.actor}`;
  return `${h.from ?? '—'} → ${h.to} · ${h.actor}`;
}

function ResubmissionDetail({ detail }: { detail: Record<string, unknown> }) {
  const filled = Object.entries((detail.filled as Record<string, unknown>) ?? {});
  const differing = Object.entries((detail.differing as Record<string, { current: unknown; submitted: unknown }>) ?? {});
  return (
    <Stack gap={2}>
      {detail.source_detail ? <Text size="xs">Detail: {String(detail.source_detail)}</Text> : null}
      {filled.map(([k, v]) => (
        <Text size="xs" key={k}>
          filled <Code>{k}</Code>: {JSON.stringify(v)}
        </Text>
      ))}
      {differing.map(([k, v]) => (
        <Text size="xs" key={k}>
          kept <Code>{k}</Code> {JSON.stringify(v.current)} (submitted {JSON.stringify(v.submitted)})
        </Text>
      ))}
      {!filled.length && !differing.length && <Text size="xs">nothing new</Text>}
    </Stack>
  );
}

export default function LeadDetail() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [converting, setConverting] = useState(false);
  const path = { params: { path: { lead_id: id } } };
  const lead = $api.useQuery('get', '/api/v1/leads/{lead_id}', path);
  const history = $api.useQuery('get', '/api/v1/leads/{lead_id}/history', path);
  const refresh = () => invalidatePaths('/api/v1/leads');
  const move = $api.useMutation('patch', '/api/v1/leads/{lead_id}', { onSuccess: refresh });
  const remove = $api.useMutation('delete', '/api/v1/leads/{lead_id}', {
    onSuccess: async () => {
      await refresh();
      navigate('/admin/crm/leads');
    },
  });
  const opportunityId = lead.data?.converted_opportunity_id;
  const opportunity = $api.useQuery('get', '/api/v1/opportunities/{opportunity_id}', { params: { path: { opportunity_id: opportunityId ?? '' } } }, { enabled: Boolean(opportunityId) });
  if (lead.error) return <ProblemAlert error={lead.error} />;
  if (!lead.data) return <Loading />;
  const l = lead.data;
  const moves = l.allowed_next_states.filter((s) => s !== 'converted');
  return (
    <Stack gap="sm">
      <BackLink to="/admin/crm/leads">Leads</BackLink>
      <Group justify="space-between" align="flex-start">
        <Group gap="sm">
          <Title order={2}>
            {l.first_name} {l.last_name}
          </Title>
          <Badge color={leadStatusColor[l.status]} size="lg" variant="light" aria-label="Status">
            {l.status}
          </Badge>
        </Group>
        <Group gap="xs">
          {moves.map((s: Status) => (
            <Button key={s} variant={s === 'unqualified' ? 'default' : 'light'} loading={move.isPending && move.variables?.body.status === s} onClick={() => move.mutate({ ...path, body: { status: s } })}>
              {moveLabel[s]}
            </Button>
          ))}
          {l.allowed_next_states.includes('converted') && (
            <Button color="green" onClick={() => setConverting(true)}>
              Convert
            </Button>
          )}
          <Button variant="default" onClick={() => setEditing(true)}>
            Edit
          </Button>
          <ConfirmButton variant="subtle" color="red" question={`Delete the lead ${l.first_name} ${l.last_name}? Its history goes with it.`} confirmLabel="Delete lead" onConfirm={() => remove.mutate(path)}>
            Delete
          </ConfirmButton>
        </Group>
      </Group>
      <ProblemAlert error={move.error ?? remove.error} />
      {editing && <LeadForm lead={l} onClose={() => setEditing(false)} />}
      {converting && <ConvertDialog lead={l} onClose={() => setConverting(false)} />}
      {l.status === 'converted' && (
        <Card withBorder bg="green.0" aria-label="Conversion">
          <Text size="sm">
            Converted {when(l.converted_at)} into{' '}
            <Anchor component={Link} to={`/admin/crm/pipeline?highlight=${l.converted_opportunity_id}`}>
              {opportunity.data ? `${opportunity.data.name} (${opportunity.data.stage}, ${money(opportunity.data.amount)})` : 'its opportunity'}
            </Anchor>
            {l.converted_account_id && (
              <>
                {' '}
                for the account{' '}
                <Anchor component={Link} to={`/admin/crm/accounts/${l.converted_account_id}`}>
                  {l.company ?? 'account'}
                </Anchor>
              </>
            )}
            .
          </Text>
        </Card>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Text fw={600} mb="xs">
            Details
          </Text>
          <SimpleGrid cols={2} spacing="sm">
            <Field label="Email">{l.email}</Field>
            <Field label="Phone">{l.phone}</Field>
            <Field label="Company">{l.company}</Field>
            <Field label="Job title">{l.title}</Field>
            <Field label="Source">{l.source}</Field>
            <Field label="Source detail">{l.source_detail}</Field>
            <Field label="Estimated value">{estimate(l.estimated_value)}</Field>
            <Field label="Created">{when(l.created_at)}</Field>
          </SimpleGrid>
          <Stack gap="sm" mt="sm">
            <Field label="Notes">{l.notes}</Field>
            {Object.keys(l.custom_data).length > 0 && (
              <Field label="Custom data">
                <Code block>{JSON.stringify(l.custom_data, null, 2)}</Code>
              </Field>
            )}
          </Stack>
        </Card>
        <Card withBorder>
          <Text fw={600} mb="xs">
            History
          </Text>
          {history.data ? (
            <Timeline bulletSize={14} lineWidth={2} aria-label="History">
              {history.data.data.map((h) => (
                <Timeline.Item key={h.id} title={entryTitle(h)} color={h.field === 'resubmission' ? 'orange' : undefined}>
                  {h.field === 'resubmission' && h.detail && <ResubmissionDetail detail={h.detail} />}
                  <Text size="xs" c="dimmed">
                    {when(h.at)}
                  </Text>
                </Timeline.Item>
              ))}
            </Timeline>
          ) : (
            <Loading />
          )}
        </Card>
      </SimpleGrid>
    </Stack>
  );
}
