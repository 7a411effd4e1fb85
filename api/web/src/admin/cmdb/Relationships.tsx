/** An entity's relationships both ways: manual ones can be added, retyped and deleted; discovered ones are shown as discovery keeps them. */
import { Autocomplete, Badge, Button, Group, Modal, Select, Stack, Table, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { Link } from 'react-router';
import { $api, invalidatePaths, isProblem, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { StatusBadge } from '../../shared/status-badge';

type RelationshipType = Schemas['CmdbRelationship']['type'];
type Related = Schemas['CmdbEntityDetail']['relationships'][number];
// Keyed by every type, so a type the API adds fails the typecheck until it is listed here.
const typeNames: Record<RelationshipType, true> = { part_of: true, runs_on: true, routes_to: true, scraped_by: true, depends_on: true };
const relationshipTypes = Object.keys(typeNames) as RelationshipType[];
const refresh = () => invalidatePaths('/api/v1/cmdb');
const failed = (error: unknown) => notifications.show({ color: 'red', title: 'The relationship did not change', message: isProblem(error) ? error.detail : String(error) });

function AddRelationship({ entity, onClose }: { entity: Schemas['CmdbEntityDetail']; onClose: () => void }) {
  const [direction, setDirection] = useState<'outgoing' | 'incoming'>('outgoing');
  const [type, setType] = useState<RelationshipType>('depends_on');
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const candidates = $api.useQuery('get', '/api/v1/cmdb/entities', { params: { query: { q: q || undefined, limit: 20, offset: 0 } } });
  const options = (candidates.data?.items ?? []).filter((c) => c.id !== entity.id).map((c) => ({ value: c.id, label: `${c.name} (${c.type}, ${c.source})` }));
  const other = options.find((o) => o.label === search)?.value;
  const create = $api.useMutation('post', '/api/v1/cmdb/relationships', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  const fieldError = useFieldErrors(create.error);
  return (
    <Modal opened onClose={onClose} title="New relationship" size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!other) return;
          const [from, to] = direction === 'outgoing' ? [entity.id, other] : [other, entity.id];
          create.mutate({ body: { from_entity_id: from, to_entity_id: to, type } });
        }}
      >
        <Stack>
          <ProblemAlert error={create.error} />
          <Select
            label="Direction"
            data={[
              { value: 'outgoing', label: `${entity.name} → other entity` },
              { value: 'incoming', label: `other entity → ${entity.name}` },
            ]}
            value={direction}
            onChange={(v) => setDirection(v === 'incoming' ? 'incoming' : 'outgoing')}
            allowDeselect={false}
          />
          <Select label="Type" data={relationshipTypes} value={type} onChange={(v) => setType((v ?? 'depends_on') as RelationshipType)} allowDeselect={false} error={fieldError('body.type')} />
          <Autocomplete
            label="Other entity"
            placeholder="search by name or key"
            data={[...new Set(options.map((o) => o.label))]}
            value={search}
            onChange={setSearch}
            error={search && !other && !candidates.isFetching ? 'choose an entity from the list' : (fieldError('body.to_entity_id') ?? fieldError('body.from_entity_id'))}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" disabled={!other} loading={create.isPending}>
              Add relationship
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function RelationshipRow({ r }: { r: Related }) {
  const patch = $api.useMutation('patch', '/api/v1/cmdb/relationships/{id}', { onSuccess: refresh, onError: failed });
  const remove = $api.useMutation('delete', '/api/v1/cmdb/relationships/{id}', { onSuccess: refresh, onError: failed });
  const manual = r.origin === 'manual';
  const arrow = r.direction === 'outgoing' ? '→' : '←';
  return (
    <Table.Tr>
      <Table.Td>
        {manual ? (
          <Group gap={4} wrap="nowrap">
            <Text span>{arrow}</Text>
            <Select
              size="xs"
              w={130}
              data={relationshipTypes}
              value={r.type}
              allowDeselect={false}
              onChange={(v) => v && v !== r.type && patch.mutate({ params: { path: { id: r.id } }, body: { type: v as RelationshipType } })}
              aria-label={`Type of the relationship with ${r.entity_name}`}
            />
          </Group>
        ) : (
          `${arrow} ${r.type}`
        )}
      </Table.Td>
      <Table.Td>
        <Link to={`/admin/cmdb/${r.entity_id}`}>{r.entity_name}</Link>{' '}
        <Text span size="xs" c="dimmed">
          ({r.entity_type})
        </Text>
      </Table.Td>
      <Table.Td>
        <StatusBadge size="xs" status={r.entity_health} />
      </Table.Td>
      <Table.Td>
        {manual ? (
          <ConfirmButton
            size="compact-xs"
            variant="subtle"
            question={`Delete the relationship ${r.type} with ${r.entity_name}?`}
            confirmLabel="Delete"
            onConfirm={() => remove.mutate({ params: { path: { id: r.id } } })}
            aria-label={`Delete the relationship with ${r.entity_name}`}
          >
            Delete
          </ConfirmButton>
        ) : (
          <Badge size="xs" variant="outline" color="gray" title="Derived by discovery: it changes with the next run, not by hand">
            discovery
          </Badge>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

export function Relationships({ entity }: { entity: Schemas['CmdbEntityDetail'] }) {
  const [adding, setAdding] = useState(false);
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Text fw={600}>Relationships</Text>
        <Button size="xs" variant="light" onClick={() => setAdding(true)}>
          Add relationship
        </Button>
      </Group>
      <Table aria-label="Relationships">
        <Table.Tbody>
          {entity.relationships.map((r) => (
            <RelationshipRow key={r.id + r.direction} r={r} />
          ))}
        </Table.Tbody>
      </Table>
      {!entity.relationships.length && <Text c="dimmed">none</Text>}
      {adding && <AddRelationship entity={entity} onClose={() => setAdding(false)} />}
    </Stack>
  );
}
