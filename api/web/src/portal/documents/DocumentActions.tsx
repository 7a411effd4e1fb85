/** What can be done to one document (re-index, delete after confirming). */
import { Button, Group, Stack } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconRefresh } from '@tabler/icons-react';
import { useState } from 'react';
import { fetchClient, invalidatePaths, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { ProblemAlert } from '../../shared/problem';

type Document = Schemas['Document'];

export function DocumentActions({ document: d, onDeleted }: { document: Document; onDeleted?: () => void }) {
  const [error, setError] = useState<unknown>(null);
  async function reindex() {
    setError(null);
    const { error: failed } = await fetchClient.POST('/api/portal/documents/{document_id}/reindex', { params: { path: { document_id: d.document_id } } });
    if (failed) return setError(failed);
    notifications.show({ message: `${d.filename} queued for indexing` });
    await invalidatePaths('/api/portal/documents');
  }
  async function remove() {
    setError(null);
    const { error: failed } = await fetchClient.DELETE('/api/portal/documents/{document_id}', { params: { path: { document_id: d.document_id } } });
    if (failed) return setError(failed);
    notifications.show({ message: `${d.filename} deleted` });
    onDeleted?.();
    await invalidatePaths('/api/portal/documents');
  }
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <Button
          size="xs"
          variant="light"
          leftSection={<IconRefresh size={14} />}
          aria-label={`Re-index ${d.filename}`}
          onClick={() => void reindex()}
          disabled={d.rag_status === 'pending' || d.rag_status === 'processing'}
        >
          Re-index
        </Button>
        <ConfirmButton size="xs" variant="light" aria-label={`Delete ${d.filename}`} question={`Delete ${d.filename}? Its content and its search index go with it.`} confirmLabel="Delete" onConfirm={() => void remove()}>
          Delete
        </ConfirmButton>
      </Group>
      <ProblemAlert error={error} />
    </Stack>
  );
}
