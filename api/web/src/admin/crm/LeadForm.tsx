/** Create or edit a lead: every field the API takes; on edit only the changed fields are sent. */
import { Button, Group, Modal, SimpleGrid, Stack, TextInput, Textarea, Autocomplete } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';
import { leadSources } from './format';

type Lead = Schemas['Lead'];
const textFields = ['first_name', 'last_name', 'email', 'phone', 'company', 'title', 'source', 'source_detail', 'estimated_value', 'notes'] as const;
type TextField = (typeof textFields)[number];
const labels: Record<TextField, string> = {
  first_name: 'First name',
  last_name: 'Last name',
  email: 'Email',
  phone: 'Phone',
  company: 'Company',
  title: 'Job title',
  source: 'Source',
  source_detail: 'Source detail',
  estimated_value: 'Estimated value',
  notes: 'Notes',
};

export function LeadForm({ lead, onClose }: { lead?: Lead; onClose: () => void }) {
  const navigate = useNavigate();
  const [values, setValues] = useState<Record<TextField, string>>(() => Object.fromEntries(textFields.map((f) => [f, lead?.[f] ?? ''])) as Record<TextField, string>);
  const [customData, setCustomData] = useState(lead && Object.keys(lead.custom_data).length ? JSON.stringify(lead.custom_data, null, 2) : '');
  const [customError, setCustomError] = useState<string>();
  const done = async (saved: Lead) => {
    await invalidatePaths('/api/v1/leads');
    onClose();
    if (!lead) navigate(`/admin/crm/leads/${saved.id}`);
  };
  const create = $api.useMutation('post', '/api/v1/leads', { onSuccess: done });
  const update = $api.useMutation('patch', '/api/v1/leads/{lead_id}', { onSuccess: done });
  const error = create.error ?? update.error;
  const fieldError = useFieldErrors(error);
  const input = (f: TextField) => ({
    label: labels[f],
    value: values[f],
    onChange: (e: { currentTarget: { value: string } }) => {
      const value = e.currentTarget.value;
      setValues((v) => ({ ...v, [f]: value }));
    },
    error: fieldError(`body.${f}`),
  });
  const submit = () => {
    let custom: Record<string, unknown> | undefined;
    try {
      custom = customData.trim() ? (JSON.parse(customData) as Record<string, unknown>) : {};
      if (typeof custom !== 'object' || custom === null || Array.isArray(custom)) throw new Error();
      setCustomError(undefined);
    } catch {
      return setCustomError('must be a JSON object');
    }
    if (lead) {
      const changed = Object.fromEntries(textFields.filter((f) => values[f] !== (lead[f] ?? '')).map((f) => [f, values[f]]));
      const body = JSON.stringify(custom) === JSON.stringify(lead.custom_data) ? changed : { ...changed, custom_data: custom };
      if (!Object.keys(body).length) return onClose();
      update.mutate({ params: { path: { lead_id: lead.id } }, body });
    } else {
      const filled = Object.fromEntries(textFields.filter((f) => values[f].trim() !== '').map((f) => [f, values[f]]));
      create.mutate({ body: { ...(filled as { first_name: string; last_name: string }), ...(Object.keys(custom).length ? { custom_data: custom } : {}) } });
    }
  };
  return (
    <Modal opened onClose={onClose} title={lead ? `Edit ${lead.first_name} ${lead.last_name}` : 'New lead'} size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Stack>
          <ProblemAlert error={error} shownBeside={textFields.map((f) => `body.${f}`)} />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput {...input('first_name')} required />
            <TextInput {...input('last_name')} required />
            <TextInput {...input('email')} type="email" />
            <TextInput {...input('phone')} />
            <TextInput {...input('company')} />
            <TextInput {...input('title')} />
            <Autocomplete label="Source" data={leadSources} value={values.source} onChange={(source) => setValues((v) => ({ ...v, source }))} error={fieldError('body.source')} />
            <TextInput {...input('source_detail')} />
            <TextInput {...input('estimated_value')} placeholder="e.g. 25000" />
          </SimpleGrid>
          <Textarea {...input('notes')} autosize minRows={2} />
          <Textarea label="Custom data (JSON object)" value={customData} onChange={(e) => setCustomData(e.currentTarget.value)} error={customError ?? fieldError('body.custom_data')} autosize minRows={2} styles={{ input: { fontFamily: 'monospace' } }} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending || update.isPending}>
              {lead ? 'Save lead' : 'Create lead'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
