/** A manual entity by hand: create one (type, name, key, health, attributes) or change one (name, health, attributes). */
import { Button, Group, JsonInput, Modal, Select, Stack, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

type Entity = Schemas['CmdbEntity'];
export const healths: Entity['health'][] = ['healthy', 'degraded', 'unhealthy', 'down', 'unknown'];

/** The attributes field as an object, or the reason it is not one (shown beside the field; nothing is sent). */
function parseAttributes(text: string): { value?: Record<string, unknown>; error?: string } {
  if (!text.trim()) return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'must be a JSON object, e.g. {"owner": "payments"}' };
    return { value: value as Record<string, unknown> };
  } catch {
    return { error: 'is not valid JSON' };
  }
}

export function EntityForm({ types = [], entity, onClose }: { types?: string[]; entity?: Entity; onClose: () => void }) {
  const navigate = useNavigate();
  const [type, setType] = useState<string | null>(entity?.type ?? null);
  const [name, setName] = useState(entity?.name ?? '');
  const [key, setKey] = useState('');
  const [health, setHealth] = useState<Entity['health']>(entity?.health ?? 'unknown');
  const [attributes, setAttributes] = useState(entity ? JSON.stringify(entity.attributes, null, 2) : '');
  const [attributesError, setAttributesError] = useState<string | undefined>();
  const done = async (e: Entity) => {
    await invalidatePaths('/api/v1/cmdb');
    onClose();
    if (!entity) {
      notifications.show({ message: `Entity ${e.name} recorded` });
      await navigate(`/admin/cmdb/${e.id}`);
    }
  };
  const create = $api.useMutation('post', '/api/v1/cmdb/entities', { onSuccess: done });
  const patch = $api.useMutation('patch', '/api/v1/cmdb/entities/{id}', { onSuccess: done });
  const error = create.error ?? patch.error;
  const fieldError = useFieldErrors(error);
  function submit() {
    const parsed = parseAttributes(attributes);
    setAttributesError(parsed.error);
    if (parsed.error) return;
    if (entity) patch.mutate({ params: { path: { id: entity.id } }, body: { name, health, attributes: parsed.value } });
    else create.mutate({ body: { type: (type ?? '') as Entity['type'], name, natural_key: key.trim() || undefined, health, attributes: parsed.value } });
  }
  return (
    <Modal opened onClose={onClose} title={entity ? `Edit ${entity.name}` : 'New entity'} size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Stack>
          <ProblemAlert error={error} />
          {!entity && <Select label="Type" data={types} value={type} onChange={setType} error={fieldError('body.type')} searchable />}
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} />
          {!entity && (
            <TextInput
              label="Natural key"
              description="unique per type among manual entities; empty: the name"
              value={key}
              onChange={(e) => setKey(e.currentTarget.value)}
              error={fieldError('body.natural_key')}
            />
          )}
          <Select label="Health" data={healths} value={health} onChange={(v) => setHealth((v ?? 'unknown') as Entity['health'])} allowDeselect={false} error={fieldError('body.health')} />
          <JsonInput
            label="Attributes"
            description="a JSON object; it replaces the attributes"
            placeholder='{"owner": "payments"}'
            value={attributes}
            onChange={setAttributes}
            validationError="is not valid JSON"
            error={attributesError ?? fieldError('body.attributes')}
            autosize
            minRows={3}
            maxRows={14}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending || patch.isPending}>
              {entity ? 'Save' : 'Create entity'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
