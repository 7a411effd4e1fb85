/** One document: its metadata, indexing state (live while indexing), download, re-index and delete. */
import { Anchor, Card, SimpleGrid, Stack, Title } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { DocumentActions } from './DocumentActions';
import { Field, Tags } from '../parts';
import { fileSize, pollWhileIndexing, RagStatus } from './rag';

export default function DocumentDetail() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const doc = $api.useQuery(
    'get',
    '/api/portal/documents/{document_id}',
    { params: { path: { document_id: id } } },
    { refetchInterval: pollWhileIndexing((d: Schemas['Document']) => [d]) },
  );
  const d = doc.data;
  return (
    <Stack gap="sm">
      <BackLink to="/documents">Documents</BackLink>
      <ProblemAlert error={doc.error} />
      {doc.isPending && <Loading />}
      {d && (
        <>
          <Title order={2} style={{ overflowWrap: 'anywhere' }}>
            {d.filename}
          </Title>
          <Card withBorder>
            <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="md">
              <Field label="Indexing">
                <RagStatus document={d} />
              </Field>
              <Field label="Category">{d.category ?? '—'}</Field>
              <Field label="Tags"><Tags tags={d.tags} /></Field>
              <Field label="Uploaded">{when(d.uploaded_at)}</Field>
              <Field label="Indexed">{when(d.indexed_at)}</Field>
              <Field label="Size">
                {fileSize(d.size)} · {d.content_type}
              </Field>
            </SimpleGrid>
          </Card>
          <Anchor href={`/api/portal/documents/${d.document_id}/content`} size="sm">
            Download the file
          </Anchor>
          <DocumentActions document={d} onDeleted={() => void navigate('/documents', { replace: true })} />
        </>
      )}
    </Stack>
  );
}
