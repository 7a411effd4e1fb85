/** Create or edit a runbook: name, matchers, severities, the n8n workflow, automatic or manual. */
import { Button, Group, Modal, NumberInput, Stack, Switch, TagsInput, TextInput, Textarea } from '@mantine/core';
import { useState } from 'react';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { MatchersInput, type Matcher } from '../../shared/matchers';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

type Runbook = Schemas['Runbook'];

export function RunbookForm({ runbook, opened, onClose }: { runbook?: Runbook; opened: boolean; onClose: () => void }) {
  const [name, setName] = useState(runbook?.name ?? '');
  const [description, setDescription] = useState(runbook?.description ?? '');
  const [matchers, setMatchers] = useState<Matcher[]>(runbook?.matchers ?? []);
  const [severities, setSeverities] = useState<string[]>(runbook?.severities ?? []);
  const [webhookUrl, setWebhookUrl] = useState(runbook?.webhook_url ?? '');
  const [workflowId, setWorkflowId] = useState(runbook?.workflow_id ?? '');
  const [autoTrigger, setAutoTrigger] = useState(runbook?.auto_trigger ?? false);
  const [enabled, setEnabled] = useState(runbook?.enabled ?? true);
  const [timeout, setTimeoutSeconds] = useState<number>(runbook?.timeout_seconds ?? 900);
  const done = async () => {
    await invalidatePaths('/api/v1/runbooks');
    onClose();
  };
  const create = $api.useMutation('post', '/api/v1/runbooks', { onSuccess: done });
  const update = $api.useMutation('patch', '/api/v1/runbooks/{id}', { onSuccess: done });
  const error = create.error ?? update.error;
  const fieldError = useFieldErrors(error);
  const body = {
    name,
    description,
    matchers,
    severities,
    webhook_url: webhookUrl,
    workflow_id: workflowId || null,
    auto_trigger: autoTrigger,
    enabled,
    timeout_seconds: timeout,
  };
  return (
    <Modal opened={opened} onClose={onClose} title={runbook ? `Edit ${runbook.name}` : 'New runbook'} size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (runbook) update.mutate({ params: { path: { id: runbook.id } }, body });
          else create.mutate({ body });
        }}
      >
        <Stack>
          <ProblemAlert error={error} />
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} />
          <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} autosize minRows={2} error={fieldError('body.description')} />
          <MatchersInput value={matchers} onChange={setMatchers} fieldError={fieldError} />
          <TagsInput label="Severities (empty: any)" value={severities} onChange={setSeverities} error={fieldError('body.severities')} />
          <TextInput label="Workflow webhook URL" placeholder="/webhook/restart-service (under AUTOMATION_URL)" value={webhookUrl} onChange={(e) => setWebhookUrl(e.currentTarget.value)} error={fieldError('body.webhook_url')} />
          <TextInput label="Workflow id" value={workflowId} onChange={(e) => setWorkflowId(e.currentTarget.value)} error={fieldError('body.workflow_id')} />
          <NumberInput label="Timeout (seconds)" value={timeout} onChange={(v) => setTimeoutSeconds(Number(v) || 0)} error={fieldError('body.timeout_seconds')} />
          <Group>
            <Switch label="Run automatically when a matching alert fires" checked={autoTrigger} onChange={(e) => setAutoTrigger(e.currentTarget.checked)} />
            <Switch label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          </Group>
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending || update.isPending}>
              {runbook ? 'Save runbook' : 'Create runbook'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
