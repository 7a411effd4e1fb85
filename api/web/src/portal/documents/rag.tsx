/** Indexing state of documents: the badge with its failure reason, and the polling that moves it live. */
import { Stack, Text } from '@mantine/core';
import type { Schemas } from '../../api/client';
import { StatusBadge } from '../../shared/status-badge';

type Document = Schemas['Document'];

export const ragStatuses = ['pending', 'processing', 'indexed', 'failed'] as const;

const indexing = (d: Document) => d.rag_status === 'pending' || d.rag_status === 'processing';

/**
 * refetchInterval for document queries: every second while a document is on its way to indexed or
 * failed (the job takes seconds), then stop; there is no document event stream to listen to.
 */
export function pollWhileIndexing<T>(docs: (data: T) => Document[]) {
  return (query: { state: { data: T | undefined } }) => (query.state.data !== undefined && docs(query.state.data).some(indexing) ? 1000 : false);
}

/** rag_status as a badge; a failed document says why beneath it. */
export function RagStatus({ document: d }: { document: Document }) {
  return (
    <Stack gap={2} align="flex-start">
      <StatusBadge status={d.rag_status} aria-label={`Indexing status of ${d.filename}`} />
      {d.rag_status === 'failed' && d.failure_reason && (
        <Text size="xs" c="red" maw={260}>
          {d.failure_reason}
        </Text>
      )}
    </Stack>
  );
}

/** Bytes as people read them. */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
