/**
 * The pipeline board: one column per stage in pipeline order, a card per opportunity (amount, close
 * date, account). A card moves by dragging it onto a column or by its "Move" menu (keyboard and
 * screen readers); the API sets the stage's probability and records the move. The forecast below.
 */
import { ActionIcon, Badge, Box, Button, Card, Group, Menu, Modal, NumberInput, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconArrowsExchange } from '@tabler/icons-react';
import { useState, type DragEvent } from 'react';
import { Link } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { useUrlState } from '../../shared/url-state';
import { day, money } from './format';
import { Forecast } from './Forecast';

type Opportunity = Schemas['Opportunity'];
type Stage = Schemas['PipelineStage'];

const refresh = () => invalidatePaths('/api/v1/opportunities', '/api/v1/pipelines', '/api/v1/accounts');

function NewOpportunity({ pipelineId, stages, accounts, onClose }: { pipelineId: string; stages: Stage[]; accounts: Schemas['Account'][]; onClose: () => void }) {
  const [name, setName] = useState('');
  const [accountId, setAccountId] = useState<string | null>(null);
  const [stage, setStage] = useState<string | null>(stages[0]?.name ?? null);
  const [amount, setAmount] = useState<number | string>('');
  const [closeDate, setCloseDate] = useState('');
  const create = $api.useMutation('post', '/api/v1/opportunities', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  const fieldError = useFieldErrors(create.error);
  return (
    <Modal opened onClose={onClose} title="New opportunity">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({
            body: { name, pipeline_id: pipelineId, ...(stage && { stage }), ...(accountId && { account_id: accountId }), ...(amount !== '' && { amount: Number(amount) }), ...(closeDate && { close_date: closeDate }) },
          });
        }}
      >
        <Stack>
          <ProblemAlert error={create.error} />
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} required />
          <Select label="Account" placeholder="none" data={accounts.map((a) => ({ value: a.id, label: a.name }))} value={accountId} onChange={setAccountId} searchable clearable />
          <Select label="Stage" data={stages.map((s) => s.name)} value={stage} onChange={setStage} allowDeselect={false} />
          <NumberInput label="Amount" value={amount} onChange={setAmount} min={0} thousandSeparator="," prefix="$" error={fieldError('body.amount')} />
          <TextInput label="Expected close date" type="date" value={closeDate} onChange={(e) => setCloseDate(e.currentTarget.value)} error={fieldError('body.close_date')} />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending}>
              Create opportunity
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function OpportunityCard({ o, stages, accountName, highlighted, onMove }: { o: Opportunity; stages: Stage[]; accountName?: string; highlighted: boolean; onMove: (o: Pick<Opportunity, 'id'>, stage: string) => void }) {
  return (
    <Card
      withBorder
      padding="xs"
      radius="md"
      draggable
      onDragStart={(e: DragEvent) => {
        e.dataTransfer.setData('application/x-opportunity', JSON.stringify({ id: o.id, stage: o.stage }));
        e.dataTransfer.effectAllowed = 'move';
      }}
      style={{ cursor: 'grab', borderColor: highlighted ? 'var(--mantine-color-blue-5)' : undefined, borderWidth: highlighted ? 2 : undefined }}
      role="article"
      aria-label={o.name}
    >
      <Group justify="space-between" wrap="nowrap" align="flex-start" gap={4}>
        <Text size="sm" fw={600} style={{ overflowWrap: 'anywhere' }}>
          {o.name}
        </Text>
        <Menu position="bottom-end" withinPortal>
          <Menu.Target>
            <ActionIcon variant="subtle" size="sm" aria-label={`Move ${o.name}`}>
              <IconArrowsExchange size={14} />
            </ActionIcon>
          </Menu.Target>
          <Menu.Dropdown>
            <Menu.Label>Move to</Menu.Label>
            {stages
              .filter((s) => s.name !== o.stage)
              .map((s) => (
                <Menu.Item key={s.id} onClick={() => onMove(o, s.name)}>
                  {s.name} ({s.probability} %)
                </Menu.Item>
              ))}
          </Menu.Dropdown>
        </Menu>
      </Group>
      {accountName && (
        <Text size="xs" c="dimmed">
          <Link to={`/admin/crm/accounts/${o.account_id}`}>{accountName}</Link>
        </Text>
      )}
      <Group justify="space-between" mt={4}>
        <Text size="sm" aria-label="Amount">
          {money(o.amount)}
        </Text>
        <Text size="xs" c="dimmed" aria-label="Close date">
          {day(o.close_date)}
        </Text>
      </Group>
      <Text size="xs" c="dimmed">
        {o.probability} % likely
      </Text>
    </Card>
  );
}

function Column({ stage, stages, pipelineId, accounts, highlight, onMove }: { stage: Stage; stages: Stage[]; pipelineId: string; accounts: Map<string, string>; highlight: string; onMove: (o: Pick<Opportunity, 'id'>, stage: string) => void }) {
  const [over, setOver] = useState(false);
  const list = $api.useQuery('get', '/api/v1/opportunities', { params: { query: { pipeline_id: pipelineId, stage: stage.name, limit: 100, sort: 'close_date' } } });
  const items = list.data?.data ?? [];
  const total = items.reduce((sum, o) => sum + o.amount, 0);
  const closed = stage.probability === 100 || stage.probability === 0;
  return (
    <Card
      withBorder
      padding="xs"
      bg={over ? 'blue.0' : closed ? 'gray.0' : undefined}
      style={{ minWidth: 0 }}
      role="region"
      aria-label={`Stage ${stage.name}`}
      onDragOver={(e: DragEvent) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e: DragEvent) => {
        e.preventDefault();
        setOver(false);
        const dragged = e.dataTransfer.getData('application/x-opportunity');
        const o = dragged ? (JSON.parse(dragged) as Pick<Opportunity, 'id' | 'stage'>) : undefined;
        if (o && o.stage !== stage.name) onMove(o, stage.name);
      }}
    >
      <Group justify="space-between" mb={4} gap={4}>
        <Text fw={700} size="sm">
          {stage.name}
        </Text>
        <Badge variant="light" color={stage.probability === 100 ? 'green' : stage.probability === 0 ? 'gray' : 'blue'} style={{ flexShrink: 0 }}>
          {stage.probability} %
        </Badge>
      </Group>
      <Text size="xs" c="dimmed" mb="xs">
        {items.length} · {money(total)}
      </Text>
      <ProblemAlert error={list.error} />
      <Stack gap="xs" mih={60}>
        {items.map((o) => (
          <OpportunityCard key={o.id} o={o} stages={stages} accountName={o.account_id ? accounts.get(o.account_id) : undefined} highlighted={o.id === highlight} onMove={onMove} />
        ))}
      </Stack>
    </Card>
  );
}

export default function PipelinePage() {
  const { values: f, set } = useUrlState(['pipeline', 'highlight'] as const);
  const [creating, setCreating] = useState(false);
  const pipelines = $api.useQuery('get', '/api/v1/pipelines');
  const accounts = $api.useQuery('get', '/api/v1/accounts', { params: { query: { limit: 100 } } });
  const move = $api.useMutation('patch', '/api/v1/opportunities/{opportunity_id}', { onSuccess: refresh });
  if (pipelines.error) return <ProblemAlert error={pipelines.error} />;
  if (!pipelines.data) return <Loading />;
  const list = pipelines.data.data;
  const pipeline = list.find((p) => p.id === f.pipeline) ?? list.find((p) => p.is_default) ?? list[0];
  if (!pipeline) return <Text>No pipeline yet.</Text>;
  const accountNames = new Map((accounts.data?.data ?? []).map((a) => [a.id, a.name]));
  const onMove = (o: Pick<Opportunity, 'id'>, stage: string) => move.mutate({ params: { path: { opportunity_id: o.id } }, body: { stage } });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Pipeline</Title>
        <Group>
          {list.length > 1 && (
            <Select aria-label="Pipeline" data={list.map((p) => ({ value: p.id, label: p.name }))} value={pipeline.id} onChange={(v) => set({ pipeline: v ?? '' })} allowDeselect={false} w={200} />
          )}
          <Button onClick={() => setCreating(true)}>New opportunity</Button>
        </Group>
      </Group>
      {creating && <NewOpportunity pipelineId={pipeline.id} stages={pipeline.stages} accounts={accounts.data?.data ?? []} onClose={() => setCreating(false)} />}
      <ProblemAlert error={move.error} />
      {/* The columns share the width, wrapping onto another row before one gets narrower than 160 px: none clipped, no sideways scroll. */}
      <Box role="group" aria-label="Board" pb="xs" style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(160px, 1fr))', gap: 'var(--mantine-spacing-xs)' }}>
        {pipeline.stages.map((s) => (
          <Column key={s.id} stage={s} stages={pipeline.stages} pipelineId={pipeline.id} accounts={accountNames} highlight={f.highlight} onMove={onMove} />
        ))}
      </Box>
      <Forecast pipelineId={pipeline.id} />
    </Stack>
  );
}
